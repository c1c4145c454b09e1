// One segment timeline on the page: its elements and state, and its start (loading the
// media, then drawing the lanes). Its methods live in the modules imported here.
import { laneMethods } from "./lanes.js";
import { AUDIO_EXTENSIONS, DECODE_MAX_BYTES, decodePeaks, metadataDuration } from "./media.js";
import { playbackMethods } from "./playback.js";
import { regionMethods } from "./regions.js";
import { rulerMethods } from "./ruler.js";
import { gettext } from "../i18n.js";

export class Timeline {
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
    // the labels and tiers of the table's empty row (its <template>), there with no row yet
    const first = this.table.closest(".rows-scroll").querySelector("template.row-template").content;
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
    this.say(gettext("Loading the media…"));
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
    let problem = gettext("The media could not be loaded: type the times in the table.");
    try {
      duration = await metadataDuration(this.media);
      if (!Number.isFinite(duration) || duration <= 0) duration = decoded ? decoded.duration : 0;
      problem = gettext("The media's length is unknown: type the times in the table.");
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
    this.say(kind === "audio" && !decoded ? gettext("The waveform could not be drawn; the timeline still works.") : "");
    this.listen();
    this.renderRuler();
    new ResizeObserver(() => this.renderRuler()).observe(this.rulerTrack);
    this.sync();
  }
}

// The lanes, the regions, the player and the ruler all read and write one timeline's state,
// so each module holds methods of this one class and `this` is the timeline in all.
Object.assign(Timeline.prototype, laneMethods, regionMethods, playbackMethods, rulerMethods);
