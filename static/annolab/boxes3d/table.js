// The table is the form: boxes are read from its rows, every change in a view is written
// back into its inputs, and rows are added and removed through its own buttons.
import { format, gettext, ngettext } from "../i18n.js";
import { TOUCH } from "../pointer-words.js";
import { FIELDS } from "./constants.js";
import { wrapAngle } from "./geometry.js";

function fmt(value, digits) {
  const text = String(Number(value.toFixed(digits)));
  return text === "-0" ? "0" : text;
}

export const tableMethods = {
  // The table's empty row (a <template>'s content): what "Add box" copies.
  rowTemplate() {
    return this.table.closest(".rows-scroll").querySelector("template.row-template").content;
  },

  rows() {
    return Array.from(this.table.tBodies[0].querySelectorAll("tr.data-row"));
  },

  input(tr, key) {
    return tr.querySelector(`[name="${this.field}__${key}"]`);
  },

  readRow(tr, index) {
    const num = (key) => {
      const el = this.input(tr, key);
      const text = el ? el.value.trim() : "";
      return text === "" ? NaN : Number(text);
    };
    const v = Object.fromEntries(FIELDS.map((k) => [k, num(k)]));
    const select = this.input(tr, "label");
    const box = {
      row: tr,
      index,
      label: select ? select.value : "",
      cx: v.cx,
      cy: v.cy,
      cz: Number.isFinite(v.cz) ? v.cz : this.ground,
      l: v.l,
      w: v.w,
      h: Number.isFinite(v.h) && v.h > 0 ? v.h : 0,
      yaw: Number.isFinite(v.yaw) ? v.yaw : 0,
    };
    box.valid = Number.isFinite(v.cx) && Number.isFinite(v.cy) && v.l > 0 && v.w > 0;
    return box;
  },

  blank(tr) {
    return Array.from(tr.querySelectorAll("input, select")).every((el) => el.value.trim() === "");
  },

  writeRow(tr, b) {
    const digits = { yaw: 4 };
    let last = null;
    for (const key of FIELDS) {
      const el = this.input(tr, key);
      // a height left empty is drawn flat and stays empty until the height is set
      if (!el || (key === "h" && !(b.h > 0))) continue;
      const text = fmt(key === "yaw" ? wrapAngle(b[key]) : b[key], digits[key] || 3);
      if (el.value !== text) {
        el.value = text;
        el.removeAttribute("aria-invalid");
        last = el;
      }
    }
    if (b.label !== undefined) {
      const select = this.input(tr, "label");
      if (select && select.value !== b.label && (b.label === "" || this.labels.includes(b.label))) {
        select.value = b.label;
        select.removeAttribute("aria-invalid");
        last = select;
      }
    }
    // Tell the rest of the page (the "Nothing to mark" check) that the row changed.
    if (last) last.dispatchEvent(new Event("input", { bubbles: true }));
    this.sync();
  },

  newRow() {
    const free = this.rows().find((tr) => this.blank(tr));
    if (free) return free;
    const before = this.rows().length;
    const x = window.scrollX, y = window.scrollY;
    if (this.addButton) this.addButton.click(); // the same path as the "Add box" button
    if (this.rows().length === before) {
      // no "Add box" button: the table's empty row, copied as annotate.js copies it
      const copy = this.rowTemplate().querySelector("tr.data-row").cloneNode(true);
      this.table.tBodies[0].appendChild(copy);
      this.table.closest(".rows-scroll").hidden = false;
    }
    window.scrollTo(x, y); // "Add box" moves focus to the new row; the view stays put
    this.bev.focus({ preventScroll: true });
    const rows = this.rows();
    return rows[rows.length - 1];
  },

  removeRow(tr, undoable = true) {
    const gone = this.boxes.find((b) => b.row === tr && b.valid);
    if (undoable && gone) this.remember({ kind: "delete", before: this.values(gone) });
    const button = tr.querySelector(".remove-row");
    if (button) button.click(); // the same path as the row's "Remove" button
    else tr.remove();
    if (this.selectedRow === tr) this.selectedRow = null;
    this.sync();
  },

  sync() {
    this.boxes = this.rows().map((tr, i) => this.readRow(tr, i));
    if (this.selectedRow && !this.boxes.some((b) => b.row === this.selectedRow && b.valid)) {
      this.selectedRow = null;
    }
    this.updateObjects();
    this.updateInfo();
    this.markSide();
    this.requestRender();
  },

  selected() {
    return this.boxes.find((b) => b.row === this.selectedRow && b.valid) || null;
  },

  select(tr) {
    this.selectedRow = tr;
    const b = this.selected();
    if (b && b.label && this.labelSelect) this.labelSelect.value = b.label;
    this.sync();
  },

  updateInfo() {
    if (!this.info) return;
    const b = this.selected();
    const count = this.boxes.filter((x) => x.valid).length;
    if (b) {
      const deg = (wrapAngle(b.yaw) * 180) / Math.PI;
      this.info.textContent =
        format(gettext("Box %(number)s"), { number: b.index + 1 }) +
        ` · ${b.label || gettext("no label")} · ` +
        `${b.l.toFixed(2)} × ${b.w.toFixed(2)} × ${b.h.toFixed(2)} m · ` +
        format(gettext("base %(base)s m · yaw %(yaw)s°"), { base: (b.cz - b.h / 2).toFixed(2), yaw: deg.toFixed(1) });
    } else {
      const n = this.points.length / 4;
      this.info.textContent =
        format(ngettext("%(count)s box", "%(count)s boxes", count), { count }) +
        " · " +
        format(gettext("%(points)s points"), { points: n.toLocaleString() }) +
        " · " +
        (count
          ? TOUCH ? gettext("tap a box to select it") : gettext("click a box to select it")
          : gettext("drag on the ground to draw a box"));
    }
  },
};
