// The table's rows drawn as regions in their tier's lane, and every region drawn or
// dragged written back into its row.
import { round2, seconds } from "./clock.js";
import { PALETTE, UNLABELLED, rgba } from "./colours.js";
import { format, gettext } from "../i18n.js";

export const regionMethods = {
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
  },

  laneFor(tier) { return this.lanes.find((lane) => lane.tier === tier) || this.lanes[0]; },
  rowOf(region) {
    for (const [row, link] of this.links) if (link.region === region) return row;
    return null;
  },

  scheduleSync() {
    if (this.syncQueued) return;
    this.syncQueued = true;
    setTimeout(() => { this.syncQueued = false; this.sync(); }, 0);
  },

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
  },

  unlink(row) {
    const link = this.links.get(row);
    this.links.delete(row);
    if (link) link.region.remove();
  },

  paint(row) {
    const link = this.links.get(row);
    if (!link) return;
    const label = this.cell(row, "label").value;
    const index = this.labels.indexOf(label);
    const rgb = index < 0 ? UNLABELLED : PALETTE[index % PALETTE.length];
    const chosen = row === this.selected;
    link.region.setOptions({ color: rgba(rgb, chosen ? 0.45 : 0.22) });
    const content = link.region.getContent(true);
    const shown = label || gettext("no label");
    if (!content || content.textContent !== shown) link.region.setContent(shown);
    if (link.region.element) {
      link.region.element.style.boxShadow = chosen ? "inset 0 0 0 2px " + rgba(rgb, 1) : "none";
      link.region.element.setAttribute("aria-label", format(gettext("%(label)s segment"), { label: shown }));
    }
  },

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
  },

  regionMoving(region) {
    const row = this.rowOf(region);
    if (!row) return;
    this.cell(row, "start").value = round2(region.start).toFixed(2);
    this.cell(row, "end").value = round2(region.end).toFixed(2);
  },

  regionMoved(region) {
    const row = this.rowOf(region);
    if (!row) return;
    const start = round2(region.start);
    const end = round2(region.end);
    this.write(row, { start, end });
    region.setOptions({ start, end });
    this.select(row);
    this.changed(row);
  },

  // The first row with nothing in it, else a new one.
  newRow() {
    const empty = this.rows().find((row) =>
      Array.from(row.querySelectorAll("input")).every((input) => input.value.trim() === "") &&
      this.cell(row, "label").value === "");
    if (empty) return empty;
    const ask = new CustomEvent("add-row", { bubbles: true, detail: {} });
    this.table.dispatchEvent(ask); // annotate.js makes it as "Add segment" does
    return ask.detail.row || null;
  },

  write(row, values) {
    if (values.start !== undefined) this.cell(row, "start").value = values.start === null ? "" : values.start.toFixed(2);
    if (values.end !== undefined) this.cell(row, "end").value = values.end === null ? "" : values.end.toFixed(2);
    const tier = this.cell(row, "tier");
    if (tier && values.tier !== undefined && values.tier !== null) tier.value = values.tier;
    if (values.label !== undefined) this.cell(row, "label").value = values.label;
  },

  // Tells the rest of the page (annotate.js's "Nothing to mark" check) that a row changed.
  changed(row) {
    this.cell(row, "start").dispatchEvent(new Event("input", { bubbles: true }));
    this.cell(row, "label").dispatchEvent(new Event("change", { bubbles: true }));
  },

  select(row) {
    const previous = this.selected;
    if (row !== previous) this.say(""); // a message is about the segment it was said for
    this.selected = row;
    for (const r of this.rows()) r.classList.toggle("is-selected", r === row);
    if (previous && previous !== row) this.paint(previous);
    if (row) this.paint(row);
  },
};
