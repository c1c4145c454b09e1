// Segment schemes on a timeline: a waveform (audio) or a plain timeline (video) under the
// player, one lane per tier, where dragging marks a segment. The table of start/end/label
// rows stays the form's only fields (it works without this script); the timeline draws its
// rows as regions and writes every drag back into them.
import WaveSurfer from "../vendor/wavesurfer/wavesurfer.esm.js";
import RegionsPlugin from "../vendor/wavesurfer/plugins/regions.esm.js";

// wavesurfer writes a <style> into its shadow root whose text depends on this height; the
// annotate pages allow that exact text by its hash (projects/content_policy.py).
const LANE_HEIGHT = 64;
const PEAK_COUNT = 4000;
// The whole file is fetched to draw it: a larger one gets a plain timeline.
const DECODE_MAX_BYTES = { audio: 200 * 1024 * 1024, video: 50 * 1024 * 1024 };
const AUDIO_EXTENSIONS = /\.(wav|wave|mp3|ogg|oga|opus|flac|m4a|aac|weba)$/i;
const PALETTE = [
  [36, 87, 197], [31, 122, 77], [179, 38, 30], [138, 90, 0],
  [110, 60, 170], [0, 120, 140], [190, 80, 140], [90, 96, 110],
];
const UNLABELLED = [90, 96, 110];
const MAX_ZOOM = 10; // the fitted width doubled at most this many times

function round2(seconds) { return Math.round(seconds * 100) / 100; }
function seconds(text) {
  const trimmed = (text || "").trim();
  if (trimmed === "") return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : NaN;
}
function rgba(rgb, alpha) { return "rgba(" + rgb.join(", ") + ", " + alpha + ")"; }
function niceStep(minimum) {
  const power = Math.pow(10, Math.floor(Math.log10(minimum)));
  for (const m of [1, 2, 5, 10]) if (m * power >= minimum) return m * power;
  return 10 * power;
}
function clockText(t, step) {
  if (step >= 60 || t >= 600) {
    const m = Math.floor(t / 60);
    const s = Math.round(t - 60 * m);
    return m + ":" + String(s).padStart(2, "0");
  }
  return (step < 1 ? t.toFixed(step < 0.1 ? 2 : 1) : String(Math.round(t))) + " s";
}

// The waveform's peaks (of a video: its sound track), decoded in the browser from a
// same-site file (another site's file would need its CORS and this page's connect-src; it
// gets a plain timeline instead, as does a video without sound).
async function decodePeaks(url, maxBytes) {
  if (new URL(url, document.baseURI).origin !== location.origin) return null;
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) return null;
  if (Number(response.headers.get("Content-Length")) > maxBytes) {
    await response.body.cancel();
    return null;
  }
  const data = await response.arrayBuffer();
  // An offline context decodes without asking for the sound card (no autoplay warning).
  const buffer = await new OfflineAudioContext(1, 1, 8000).decodeAudioData(data);
  const count = Math.max(1, Math.min(PEAK_COUNT, buffer.length));
  const peaks = new Float32Array(count);
  const size = buffer.length / count;
  for (let c = 0; c < buffer.numberOfChannels; c++) {
    const samples = buffer.getChannelData(c);
    for (let i = 0; i < count; i++) {
      let peak = peaks[i];
      const stop = Math.min(samples.length, Math.ceil((i + 1) * size));
      for (let j = Math.floor(i * size); j < stop; j++) {
        const v = Math.abs(samples[j]);
        if (v > peak) peak = v;
      }
      peaks[i] = peak;
    }
  }
  return { peaks, duration: buffer.duration };
}

function metadataDuration(media) {
  return new Promise((resolve, reject) => {
    const done = () => {
      media.removeEventListener("loadedmetadata", done);
      media.removeEventListener("error", failed);
      resolve(media.duration);
    };
    const failed = () => {
      media.removeEventListener("loadedmetadata", done);
      media.removeEventListener("error", failed);
      reject(new Error("media error"));
    };
    if (media.readyState >= 1) return resolve(media.duration);
    if (media.error) return reject(new Error("media error"));
    media.addEventListener("loadedmetadata", done);
    media.addEventListener("error", failed);
    if (media.preload === "none") media.preload = "metadata";
  });
}

class Timeline {
  constructor(root) {
    this.root = root;
    this.field = root.dataset.for;
    const scope = root.closest("fieldset") || document;
    this.media = scope.querySelector('[data-media-for="' + this.field + '"]');
    this.table = scope.querySelector('table[data-rows="' + this.field + '"]');
    this.body = this.table.tBodies[0];
    this.markButton = scope.querySelector('.mark-time[data-for="' + this.field + '"]');
    this.lanesEl = root.querySelector(".timeline-lanes");
    this.rulerTrack = root.querySelector(".timeline-ruler-track");
    this.statusEl = root.querySelector(".timeline-status");
    this.clockEl = root.querySelector(".timeline-clock");
    this.playButton = root.querySelector(".timeline-play");
    this.segmentButton = root.querySelector(".timeline-play-segment");
    this.zoomInButton = root.querySelector(".timeline-zoom-in");
    this.zoomOutButton = root.querySelector(".timeline-zoom-out");
    this.zoomLevel = 0; // 0: the whole media fits the lane
    const first = this.body.querySelector("tr.data-row");
    this.labels = Array.from(this.cell(first, "label").options)
      .map((option) => option.value)
      .filter((value) => value !== "");
    const tierSelect = this.cell(first, "tier");
    this.tiers = tierSelect ? Array.from(tierSelect.options).map((o) => o.value) : [null];
    this.lanes = [];
    this.links = new Map(); // table row -> {region, lane}
    this.selected = null;
    this.duration = 0;
    this.time = 0; // the playhead: wavesurfer holds a seek until the media can play
    this.pointer = null; // where the pointer went down and up, for a drag that marks a segment
    this.lastLane = null; // the lane last pressed: where "[" begins a new segment
    this.syncQueued = false;
  }

  cell(row, key) { return row.querySelector('[name="' + this.field + "__" + key + '"]'); }
  rows() { return Array.from(this.body.querySelectorAll("tr.data-row")); }
  say(text) { this.statusEl.textContent = text; }

  async start() {
    if (this.markButton) {
      this.markButton.hidden = false;
      this.markButton.addEventListener("click", () => this.useCurrentTime());
    }
    this.root.hidden = false;
    this.say("Loading the media…");
    const kind = this.root.dataset.mediaKind ||
      (AUDIO_EXTENSIONS.test(new URL(this.media.currentSrc || this.media.src, document.baseURI).pathname)
        ? "audio" : "video");
    let decoded = null;
    try {
      const most = DECODE_MAX_BYTES[kind] || DECODE_MAX_BYTES.video;
      decoded = await decodePeaks(this.media.currentSrc || this.media.src, most);
    } catch (error) {
      decoded = null; // undecodable here: the player may still play it, on a plain timeline
    }
    let duration = 0;
    let problem = "The media could not be loaded: type the times in the table.";
    try {
      duration = await metadataDuration(this.media);
      if (!Number.isFinite(duration) || duration <= 0) duration = decoded ? decoded.duration : 0;
      problem = "The media's length is unknown: type the times in the table.";
    } catch (error) {
      duration = 0;
    }
    if (!duration) {
      for (const part of this.root.querySelectorAll(".timeline-toolbar, .timeline-lanes, .timeline-ruler, .timeline-keys")) {
        part.hidden = true;
      }
      this.say(problem);
      return;
    }
    this.duration = duration;
    await this.buildLanes(decoded);
    this.say(kind === "audio" && !decoded ? "The waveform could not be drawn; the timeline still works." : "");
    this.listen();
    this.renderRuler();
    new ResizeObserver(() => this.renderRuler()).observe(this.rulerTrack);
    this.sync();
  }

  buildLanes(decoded) {
    const peaks = decoded ? decoded.peaks : new Float32Array(2);
    const ready = [];
    for (const tier of this.tiers) {
      const laneEl = document.createElement("div");
      laneEl.className = "timeline-lane";
      const name = document.createElement("div");
      name.className = "timeline-lane-name";
      name.textContent = tier === null ? "" : tier;
      if (tier !== null) name.title = tier;
      const wave = document.createElement("div");
      wave.className = "timeline-wave";
      if (tier !== null) wave.dataset.tier = tier;
      laneEl.append(name, wave);
      this.lanesEl.append(laneEl);
      const regions = RegionsPlugin.create();
      const ws = WaveSurfer.create({
        container: wave,
        media: this.media,
        peaks: [peaks],
        duration: this.duration,
        height: LANE_HEIGHT,
        // a plain timeline (no sound drawn) shows no line at all
        waveColor: decoded ? "#9aa3b2" : "rgba(0, 0, 0, 0)",
        progressColor: decoded ? "#5d6675" : "rgba(0, 0, 0, 0)",
        cursorColor: "#b3261e",
        cursorWidth: 2,
        normalize: Boolean(decoded),
        interact: true,
        autoScroll: true,
        autoCenter: false,
        // zoomed in, the lanes scroll together on the last lane's scrollbar
        hideScrollbar: tier !== this.tiers[this.tiers.length - 1],
        plugins: [regions],
      });
      const lane = { tier, ws, regions, wave };
      this.lanes.push(lane);
      ready.push(new Promise((resolve) => {
        ws.once("ready", resolve);
        ws.once("error", resolve);
      }));
      regions.enableDragSelection({ color: rgba(UNLABELLED, 0.25) }, 3);
      regions.on("region-created", (region) => this.regionCreated(lane, region));
      regions.on("region-update", (region) => this.regionMoving(region));
      regions.on("region-updated", (region) => this.regionMoved(region));
      regions.on("region-clicked", (region) => {
        const row = this.rowOf(region);
        if (row) this.select(row);
      });
      wave.addEventListener("pointerdown", (event) => {
        this.pointer = { lane, down: event.clientX, up: null };
        this.lastLane = lane;
        this.lanesEl.focus({ preventScroll: true });
      });
    }
    // Capture runs before the regions plugin's own pointerup (which creates the region).
    window.addEventListener("pointerup", (event) => {
      if (this.pointer) this.pointer.up = event.clientX;
    }, true);
    return Promise.all(ready);
  }

  listen() {
    const media = this.media;
    const tick = () => {
      this.clockEl.textContent = this.time.toFixed(2) + " / " + this.duration.toFixed(2) + " s";
    };
    for (const lane of this.lanes) {
      lane.ws.on("timeupdate", (t) => {
        this.time = t;
        tick();
      });
      // A click seeks its own lane; the other lanes follow.
      lane.ws.on("interaction", (t) => this.seek(t));
    }
    tick();
    const playing = () => { this.playButton.textContent = media.paused ? "Play" : "Pause"; };
    media.addEventListener("play", playing);
    media.addEventListener("pause", playing);
    this.playButton.addEventListener("click", () => this.playPause());
    this.segmentButton.addEventListener("click", () => this.playSegment());
    this.zoomInButton.addEventListener("click", () => this.zoom(1));
    this.zoomOutButton.addEventListener("click", () => this.zoom(-1));
    this.zoomOutButton.disabled = true;
    this.lanes[0].ws.on("redrawcomplete", () => this.renderRuler());
    for (const lane of this.lanes) {
      lane.ws.on("scroll", (startTime, endTime, left) => {
        for (const other of this.lanes) {
          if (other !== lane && other.ws.getScroll() !== left) other.ws.setScroll(left);
        }
        this.renderRuler();
      });
    }
    this.lanesEl.addEventListener("keydown", (event) => this.key(event));

    const later = () => this.scheduleSync();
    this.table.addEventListener("input", later);
    this.table.addEventListener("change", later);
    // Remove is handled by annotate.js; look again once it has run.
    this.table.addEventListener("click", (event) => {
      if (event.target.closest(".remove-row")) later();
    });
    this.table.addEventListener("focusin", (event) => {
      const row = event.target.closest("tr.data-row");
      if (row) this.select(row);
    });
  }

  // ----- table -> regions

  values(row) {
    const start = seconds(this.cell(row, "start").value);
    const end = seconds(this.cell(row, "end").value);
    const tier = this.cell(row, "tier");
    return {
      start, end,
      label: this.cell(row, "label").value,
      tier: tier ? tier.value : null,
      drawn: start !== null && end !== null && !Number.isNaN(start) && !Number.isNaN(end) &&
        start >= 0 && start <= end,
    };
  }

  laneFor(tier) { return this.lanes.find((lane) => lane.tier === tier) || this.lanes[0]; }
  rowOf(region) {
    for (const [row, link] of this.links) if (link.region === region) return row;
    return null;
  }

  scheduleSync() {
    if (this.syncQueued) return;
    this.syncQueued = true;
    setTimeout(() => { this.syncQueued = false; this.sync(); }, 0);
  }

  // Draws every row with a valid start and end as a region in its tier's lane, and drops the
  // regions of rows that went away or lost their times.
  sync() {
    if (!this.lanes.length) return;
    const rows = this.rows();
    for (const [row] of this.links) if (!rows.includes(row)) this.unlink(row);
    for (const row of rows) {
      const v = this.values(row);
      let link = this.links.get(row);
      if (!v.drawn) {
        if (link) this.unlink(row);
        continue;
      }
      const lane = this.laneFor(v.tier);
      if (link && link.lane !== lane) {
        this.unlink(row);
        link = null;
      }
      if (!link) {
        this.creating = true;
        const region = lane.regions.addRegion({ start: v.start, end: v.end, color: rgba(UNLABELLED, 0.25) });
        this.creating = false;
        link = { region, lane };
        this.links.set(row, link);
      } else {
        const clamp = (t) => Math.max(0, Math.min(this.duration, t));
        if (link.region.start !== clamp(v.start) || link.region.end !== clamp(v.end)) {
          link.region.setOptions({ start: v.start, end: v.end });
        }
      }
      this.paint(row);
    }
    if (this.selected && !rows.includes(this.selected)) this.select(null);
  }

  unlink(row) {
    const link = this.links.get(row);
    this.links.delete(row);
    if (link) link.region.remove();
  }

  paint(row) {
    const link = this.links.get(row);
    if (!link) return;
    const label = this.cell(row, "label").value;
    const index = this.labels.indexOf(label);
    const rgb = index < 0 ? UNLABELLED : PALETTE[index % PALETTE.length];
    const chosen = row === this.selected;
    link.region.setOptions({ color: rgba(rgb, chosen ? 0.45 : 0.22) });
    const content = link.region.getContent(true);
    if (!content || content.textContent !== (label || "no label")) link.region.setContent(label || "no label");
    if (link.region.element) {
      link.region.element.style.boxShadow = chosen ? "inset 0 0 0 2px " + rgba(rgb, 1) : "none";
      link.region.element.setAttribute("aria-label", (label || "no label") + " segment");
    }
  }

  // ----- regions -> table

  regionCreated(lane, region) {
    if (this.creating) return;
    // A drag on empty timeline: the segment spans from where the pointer went down to where
    // it came up (the plugin's own region starts a few pixels wide).
    let start = region.start;
    let end = region.end;
    const drag = this.pointer;
    if (drag && drag.lane === lane && drag.up !== null) {
      const box = lane.ws.getWrapper().getBoundingClientRect();
      const at = (x) => Math.max(0, Math.min(this.duration, ((x - box.left) / box.width) * this.duration));
      start = at(Math.min(drag.down, drag.up));
      end = at(Math.max(drag.down, drag.up));
    }
    this.pointer = null;
    start = round2(start);
    end = round2(end);
    const row = this.newRow();
    if (!row) {
      region.remove();
      return;
    }
    this.write(row, { start, end, tier: lane.tier });
    region.setOptions({ start, end });
    this.links.set(row, { region, lane });
    this.select(row);
    this.changed(row);
    this.lanesEl.focus({ preventScroll: true });
  }

  regionMoving(region) {
    const row = this.rowOf(region);
    if (!row) return;
    this.cell(row, "start").value = round2(region.start).toFixed(2);
    this.cell(row, "end").value = round2(region.end).toFixed(2);
  }

  regionMoved(region) {
    const row = this.rowOf(region);
    if (!row) return;
    const start = round2(region.start);
    const end = round2(region.end);
    this.write(row, { start, end });
    region.setOptions({ start, end });
    this.select(row);
    this.changed(row);
  }

  // The first row with nothing in it, else a new one.
  newRow() {
    const empty = this.rows().find((row) =>
      Array.from(row.querySelectorAll("input")).every((input) => input.value.trim() === "") &&
      this.cell(row, "label").value === "");
    if (empty) return empty;
    const ask = new CustomEvent("add-row", { bubbles: true, detail: {} });
    this.table.dispatchEvent(ask); // annotate.js makes it as "Add segment" does
    return ask.detail.row || null;
  }

  write(row, values) {
    if (values.start !== undefined) this.cell(row, "start").value = values.start === null ? "" : values.start.toFixed(2);
    if (values.end !== undefined) this.cell(row, "end").value = values.end === null ? "" : values.end.toFixed(2);
    const tier = this.cell(row, "tier");
    if (tier && values.tier !== undefined && values.tier !== null) tier.value = values.tier;
    if (values.label !== undefined) this.cell(row, "label").value = values.label;
  }

  // Tells the rest of the page (annotate.js's "Nothing to mark" check) that a row changed.
  changed(row) {
    this.cell(row, "start").dispatchEvent(new Event("input", { bubbles: true }));
    this.cell(row, "label").dispatchEvent(new Event("change", { bubbles: true }));
  }

  select(row) {
    const previous = this.selected;
    if (row !== previous) this.say(""); // a message is about the segment it was said for
    this.selected = row;
    for (const r of this.rows()) r.classList.toggle("is-selected", r === row);
    if (previous && previous !== row) this.paint(previous);
    if (row) this.paint(row);
  }

  // ----- playing and keys

  seek(t) {
    const to = Math.max(0, Math.min(this.duration, t));
    for (const lane of this.lanes) lane.ws.setTime(to);
    if (!this.zoomLevel) return;
    const ws = this.lanes[0].ws; // zoomed in: bring the playhead into view
    const perSecond = ws.getWrapper().getBoundingClientRect().width / this.duration;
    const from = ws.getScroll() / perSecond;
    const visible = ws.getWidth() / perSecond;
    if (to < from || to > from + visible) {
      for (const lane of this.lanes) lane.ws.setScrollTime(Math.max(0, to - visible / 2));
    }
  }

  playPause() {
    if (this.media.paused) {
      this.play(() => this.lanes[0].ws.play());
    } else {
      this.media.pause();
    }
  }

  play(start) {
    Promise.resolve()
      .then(start)
      .catch((error) => this.say("The browser did not start playing (" + error.message + ")."));
  }

  playSegment() {
    const row = this.selected;
    const link = row && this.links.get(row);
    if (link) {
      this.play(() => link.lane.ws.play(link.region.start, link.region.end));
      return;
    }
    const start = row ? seconds(this.cell(row, "start").value) : null;
    if (start !== null && !Number.isNaN(start)) {
      this.seek(start);
      this.play(() => this.lanes[0].ws.play());
    } else {
      this.say("Select a segment first: click it on the timeline or in the table.");
    }
  }

  // "[" and "]": the selected row's start or end at the playhead, or a new row when there is
  // none selected or the playhead is past the side that would have to move.
  mark(side) {
    const t = round2(this.time);
    let row = this.selected;
    if (row) {
      const v = this.values(row);
      const fits = side === "start"
        ? v.end === null || Number.isNaN(v.end) || t <= v.end
        : v.start === null || Number.isNaN(v.start) || t >= v.start;
      if (!fits && side === "end") {
        this.say("The playhead (" + t.toFixed(2) + " s) is before this segment's start.");
        return;
      }
      if (!fits) row = null;
    }
    if (!row) {
      row = this.newRow();
      if (!row) return;
      const lane = this.focusLane();
      if (lane) this.write(row, { tier: lane.tier });
    }
    this.write(row, { [side]: t });
    this.select(row);
    this.changed(row);
    this.sync();
    this.lanesEl.focus({ preventScroll: true });
  }

  focusLane() { return this.lastLane || this.lanes[0]; }

  key(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key;
    let done = true;
    if (key === " " || key === "Spacebar") this.playPause();
    else if (key === "[") this.mark("start");
    else if (key === "]") this.mark("end");
    else if (key === "p" || key === "P") this.playSegment();
    else if (key === "Delete" || key === "Backspace") this.removeSelected();
    else if (key === "Escape") this.select(null);
    else if (key === "ArrowLeft") this.seek(this.time - 1);
    else if (key === "ArrowRight") this.seek(this.time + 1);
    else if (/^[1-9]$/.test(key)) this.labelSelected(Number(key) - 1);
    else if (key === "+" || key === "=") this.zoom(1);
    else if (key === "-") this.zoom(-1);
    else done = false;
    if (done) {
      event.preventDefault();
      event.stopPropagation(); // annotate.js's page-wide keys do not see it
    }
  }

  removeSelected() {
    const row = this.selected;
    if (!row) return this.say("Select a segment first.");
    this.select(null);
    // annotate.js removes (or empties) it as Remove does
    row.dispatchEvent(new CustomEvent("remove-row", { bubbles: true }));
    this.sync();
    this.lanesEl.focus({ preventScroll: true });
  }

  labelSelected(index) {
    if (!this.selected) return this.say("Select a segment first.");
    if (index >= this.labels.length) return;
    this.write(this.selected, { label: this.labels[index] });
    this.changed(this.selected);
    this.paint(this.selected);
  }

  // "Use current time": fills an empty start or end (the selected row's, else the first
  // row's that has one), never a value already typed, and only once the media has loaded.
  useCurrentTime() {
    if (this.media.readyState < 1 || !this.lanes.length) {
      this.say("The media has not loaded yet: nothing was filled in.");
      return;
    }
    const t = round2(this.time);
    const open = (row) => {
      const v = this.values(row);
      return v.start === null ? "start" : v.end === null ? "end" : null;
    };
    let row = this.selected && open(this.selected) ? this.selected : this.rows().find(open);
    if (!row) row = this.newRow();
    if (!row) return;
    const side = open(row);
    const v = this.values(row);
    if (side === "end" && !Number.isNaN(v.start) && t < v.start) {
      this.say(t.toFixed(2) + " s is before this segment's start (" + v.start.toFixed(2) + " s): play on, then try again.");
      this.select(row);
      return;
    }
    this.write(row, { [side]: t });
    this.select(row);
    this.changed(row);
    this.say("Segment " + (this.rows().indexOf(row) + 1) + " " + side + ": " + t.toFixed(2) + " s.");
  }

  // Zoom in (+1) or out (-1): each step doubles or halves the pixels per second, from the
  // whole media fitting the lane; the playhead stays in view.
  zoom(direction) {
    const level = Math.max(0, Math.min(MAX_ZOOM, this.zoomLevel + direction));
    if (level === this.zoomLevel || !this.lanes.length) return;
    this.zoomLevel = level;
    const fit = this.lanes[0].ws.getWidth() / this.duration;
    for (const lane of this.lanes) lane.ws.zoom(level ? fit * Math.pow(2, level) : 0);
    const visible = this.duration / Math.pow(2, level);
    for (const lane of this.lanes) lane.ws.setScrollTime(Math.max(0, this.time - visible / 2));
    this.zoomOutButton.disabled = level === 0;
    this.zoomInButton.disabled = level === MAX_ZOOM;
    this.renderRuler();
  }

  // Ticks under the lanes for the part of the media in view.
  renderRuler() {
    const width = this.rulerTrack.clientWidth;
    if (!width || !this.duration || !this.lanes.length) return;
    const ws = this.lanes[0].ws;
    const perSecond = ws.getWrapper().getBoundingClientRect().width / this.duration || width / this.duration;
    const left = ws.getScroll();
    const step = niceStep(64 / perSecond);
    const ticks = [];
    for (let n = Math.floor(left / perSecond / step); n * step <= this.duration + 1e-9; n++) {
      const x = n * step * perSecond - left;
      if (x > width) break;
      const tick = document.createElement("span");
      tick.className = "timeline-tick";
      tick.style.left = x + "px";
      tick.textContent = clockText(n * step, step);
      ticks.push(tick);
    }
    this.rulerTrack.replaceChildren(...ticks);
  }
}

document.querySelectorAll(".segment-timeline[data-for]").forEach((root) => {
  new Timeline(root).start();
});
