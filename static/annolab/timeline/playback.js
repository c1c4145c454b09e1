// Playing and keys: seeking every lane, playing a segment, marking a segment's start or
// end at the playhead, labelling and removing the selected row, and "Use current time".
import { format, gettext } from "../i18n.js";
import { TOUCH } from "../pointer-words.js";
import { round2, seconds } from "./clock.js";

export const playbackMethods = {
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
  },

  playPause() {
    if (this.media.paused) {
      this.play(() => this.lanes[0].ws.play());
    } else {
      this.media.pause();
    }
  },

  play(start) {
    Promise.resolve()
      .then(start)
      .catch((error) => this.say(format(gettext("The browser did not start playing (%(reason)s)."), { reason: error.message })));
  },

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
      this.say(
        TOUCH
          ? gettext("Select a segment first: tap it on the timeline or in the table.")
          : gettext("Select a segment first: click it on the timeline or in the table.")
      );
    }
  },

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
        this.say(format(gettext("The playhead (%(time)s s) is before this segment's start."), { time: t.toFixed(2) }));
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
  },

  focusLane() { return this.lastLane || this.lanes[0]; },

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
  },

  removeSelected() {
    const row = this.selected;
    if (!row) return this.say(gettext("Select a segment first."));
    this.select(null);
    // annotate.js removes (or empties) it as Remove does
    row.dispatchEvent(new CustomEvent("remove-row", { bubbles: true }));
    this.sync();
    this.lanesEl.focus({ preventScroll: true });
  },

  labelSelected(index) {
    if (!this.selected) return this.say(gettext("Select a segment first."));
    if (index >= this.labels.length) return;
    this.write(this.selected, { label: this.labels[index] });
    this.changed(this.selected);
    this.paint(this.selected);
  },

  // "Use current time": fills an empty start or end (the selected row's, else the first
  // row's that has one), never a value already typed, and only once the media has loaded.
  useCurrentTime() {
    if (this.media.readyState < 1 || !this.lanes.length) {
      this.say(gettext("The media has not loaded yet: nothing was filled in."));
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
      this.say(
        format(gettext("%(time)s s is before this segment's start (%(start)s s): play on, then try again."), {
          time: t.toFixed(2),
          start: v.start.toFixed(2),
        })
      );
      this.select(row);
      return;
    }
    this.write(row, { [side]: t });
    this.select(row);
    this.changed(row);
    const said = side === "start" ? gettext("Segment %(number)s start: %(time)s s.") : gettext("Segment %(number)s end: %(time)s s.");
    this.say(format(said, { number: this.rows().indexOf(row) + 1, time: t.toFixed(2) }));
  },
};
