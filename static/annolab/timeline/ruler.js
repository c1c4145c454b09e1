// Zooming the lanes together, and the ruler of ticks under them.
import { clockText, niceStep } from "./clock.js";

const MAX_ZOOM = 10; // the fitted width doubled at most this many times

export const rulerMethods = {
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
  },

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
  },
};
