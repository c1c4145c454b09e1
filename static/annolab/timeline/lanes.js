// One wavesurfer lane per tier, each with its regions, and the events the timeline
// listens to: the playhead, the buttons, scrolling together, the keys and the table.
import WaveSurfer from "../../vendor/wavesurfer/wavesurfer.esm.js";
import RegionsPlugin from "../../vendor/wavesurfer/plugins/regions.esm.js";
import { UNLABELLED, rgba } from "./colours.js";
import { gettext } from "../i18n.js";

// wavesurfer writes a <style> into its shadow root whose text depends on this height; the
// annotate pages allow that exact text by its hash (projects/content_policy.py).
const LANE_HEIGHT = 64;

export const laneMethods = {
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
  },

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
    const playing = () => { this.playButton.textContent = media.paused ? gettext("Play") : gettext("Pause"); };
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
  },
};
