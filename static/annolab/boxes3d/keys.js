// The keyboard: nudge, turn, raise and label the selected box, step through boxes, zoom,
// undo and cancel. The keys are listed under the views in the template.
import { MIN_SIZE, STEP } from "./constants.js";
import { wrapAngle } from "./geometry.js";

export const keyMethods = {
  // Keys reach the views only while one of their canvases has the focus.
  onKeyDown(e) {
    if (e.target.tagName !== "CANVAS" || e.altKey) return;
    if ((e.ctrlKey || e.metaKey) && !e.shiftKey && (e.key === "z" || e.key === "Z")) {
      e.preventDefault();
      this.undo();
      return;
    }
    if (e.ctrlKey || e.metaKey) return;
    if (this.onKey(e)) {
      e.preventDefault();
      e.stopPropagation(); // the page's own keys (best-worst choices) stay out of it
    }
  },

  onKey(e) {
    const k = e.key, big = e.shiftKey, b = this.selected();
    if (k === "Escape") {
      const d = this.drag || this.sideDrag;
      if (d) {
        // a drag under way is called off: the box goes back to where it was
        this.drag = this.sideDrag = null;
        if (d.box && d.moved) {
          this.history.pop();
          this.writeRow(d.box.row, d.box);
        }
      } else {
        this.select(null);
      }
      this.requestRender();
      return true;
    }
    if (k === "n" || k === "N") {
      const drawn = this.boxes.filter((x) => x.valid);
      if (!drawn.length) return true;
      const at = drawn.findIndex((x) => x.row === this.selectedRow), step = k === "N" ? -1 : 1;
      const next = at < 0 ? (step > 0 ? 0 : drawn.length - 1) : (at + step + drawn.length) % drawn.length;
      this.select(drawn[next].row);
      return true;
    }
    if (k === "z" || k === "Z") {
      this.toggleZoom(b);
      return true;
    }
    if (/^[1-9]$/.test(k)) {
      const label = this.labels[Number(k) - 1];
      if (!label) return false;
      if (this.labelSelect) this.labelSelect.value = label;
      if (b) this.nudge(b, { label }, k);
      return true;
    }
    if (k === "f" || k === "F") {
      this.focusPerspective(b);
      return true;
    }
    if (!b) return false;
    const move = big ? STEP.moveBig : STEP.move;
    const turn = big ? STEP.turnBig : STEP.turn;
    const base = b.cz - b.h / 2;
    const height = (dh) => {
      const nh = Math.max(MIN_SIZE, b.h + dh);
      this.nudge(b, { h: nh, cz: base + nh / 2 }, k);
    };
    switch (k) {
      case "q": case "Q": this.nudge(b, { yaw: wrapAngle(b.yaw + turn) }, k); return true;
      case "e": case "E": this.nudge(b, { yaw: wrapAngle(b.yaw - turn) }, k); return true;
      case "ArrowUp": this.nudge(b, { cx: b.cx + move }, k); return true;
      case "ArrowDown": this.nudge(b, { cx: b.cx - move }, k); return true;
      case "ArrowLeft": this.nudge(b, { cy: b.cy + move }, k); return true;
      case "ArrowRight": this.nudge(b, { cy: b.cy - move }, k); return true;
      case "+": case "=": height(STEP.height); return true;
      case "-": case "_": height(-STEP.height); return true;
      case "PageUp": height(big ? STEP.heightBig : STEP.height); return true;
      case "PageDown": height(-(big ? STEP.heightBig : STEP.height)); return true;
      case "[": this.nudge(b, { cz: b.cz - STEP.height }, k); return true;
      case "]": this.nudge(b, { cz: b.cz + STEP.height }, k); return true;
      case "{": this.nudge(b, { cz: b.cz - STEP.heightBig }, k); return true;
      case "}": this.nudge(b, { cz: b.cz + STEP.heightBig }, k); return true;
      case "Delete": case "Backspace": this.removeRow(b.row); return true;
      default: return false;
    }
  },

  // A change by key or by the label list; a key held down is one step to undo.
  nudge(b, change, key = "") {
    const last = this.history[this.history.length - 1], now = Date.now();
    const repeat = last && key && last.key === key && last.row === b.row && now - last.at < 800;
    if (repeat) last.at = now;
    else this.remember({ kind: "edit", row: b.row, before: this.values(b), key, at: now });
    this.writeRow(b.row, { ...b, ...change });
  },
};
