// Undo for the views: a drag, a key (however long it is held) or a label choice is one step.

export const undoMethods = {
  // What the views changed, the last first (typing in the table has the browser's own undo).
  values(b) {
    return { cx: b.cx, cy: b.cy, cz: b.cz, l: b.l, w: b.w, h: b.h, yaw: b.yaw, label: b.label };
  },

  remember(entry) {
    this.history.push(entry);
    if (this.history.length > 200) this.history.shift();
  },

  undo() {
    const entry = this.history.pop();
    if (!entry) return;
    const live = entry.row && this.rows().includes(entry.row);
    if (entry.kind === "edit" && live) {
      this.selectedRow = entry.row;
      this.writeRow(entry.row, entry.before);
    } else if (entry.kind === "create" && live) {
      this.removeRow(entry.row, false);
    } else if (entry.kind === "delete") {
      const tr = this.newRow();
      this.selectedRow = tr;
      this.writeRow(tr, entry.before);
    } else {
      this.undo(); // its row was removed in the table since: the step before
    }
  },
};
