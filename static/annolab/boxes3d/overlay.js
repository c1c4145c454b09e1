// The 2D overlays over the WebGL pictures: the bird's-eye view's labels, handles, scale and
// compass, and the perspective's labels.
import * as THREE from "../../vendor/three/three.module.js";
import { HANDLE_PX, ROTATE_PX, SELECTED } from "./constants.js";
import { toWorld } from "./geometry.js";
import { gettext } from "../i18n.js";

export const overlayMethods = {
  // Smaller on screen than a few handles: drawn with its corner handles only.
  small(b) {
    return Math.min(b.l, b.w) / this.mpp < 4 * HANDLE_PX;
  },

  handles(b) {
    const out = [];
    for (const sx of [-1, 1]) for (const sy of [-1, 1]) out.push({ kind: "corner", sx, sy });
    if (!this.small(b)) {
      // edge handles only where there is room for them between the corners
      out.push({ kind: "edge", sx: 1, sy: 0 }, { kind: "edge", sx: -1, sy: 0 });
      out.push({ kind: "edge", sx: 0, sy: 1 }, { kind: "edge", sx: 0, sy: -1 });
    }
    for (const hd of out) {
      const p = toWorld(b, (hd.sx * b.l) / 2, (hd.sy * b.w) / 2);
      Object.assign(hd, this.worldToBev(p.x, p.y));
    }
    const front = toWorld(b, b.l / 2 + ROTATE_PX * this.mpp, 0);
    const base = toWorld(b, b.l / 2, 0);
    out.push({ kind: "rotate", ...this.worldToBev(front.x, front.y), from: this.worldToBev(base.x, base.y) });
    return out;
  },

  corners(b) {
    return [
      [1, 1],
      [1, -1],
      [-1, -1],
      [-1, 1],
    ].map(([sx, sy]) => {
      const p = toWorld(b, (sx * b.l) / 2, (sy * b.w) / 2);
      return this.worldToBev(p.x, p.y);
    });
  },

  overlayContext(canvas) {
    const ctx = canvas.getContext("2d");
    const dpr = canvas.width / Math.max(1, canvas.clientWidth);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, canvas.clientWidth, canvas.clientHeight);
    ctx.font = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
    ctx.textBaseline = "middle";
    return ctx;
  },

  tag(ctx, text, x, y, colour) {
    const w = ctx.measureText(text).width + 10;
    ctx.fillStyle = "rgba(15, 19, 26, 0.82)";
    ctx.fillRect(x, y - 9, w, 18);
    ctx.fillStyle = colour;
    ctx.fillRect(x, y - 9, 3, 18);
    ctx.fillStyle = "#eef2f8";
    ctx.fillText(text, x + 6, y);
  },

  drawBevOverlay() {
    const ctx = this.overlayContext(this.bev);
    const { w, h } = this.bevSize();
    // the sensor at the origin
    const o = this.worldToBev(0, 0);
    if (o.px > 0 && o.px < w && o.py > 0 && o.py < h) {
      ctx.strokeStyle = "#e6ebf3";
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(o.px, o.py - 8);
      ctx.lineTo(o.px - 5, o.py + 5);
      ctx.lineTo(o.px + 5, o.py + 5);
      ctx.closePath();
      ctx.stroke();
    }
    for (const b of this.boxes) {
      if (!b.valid) continue;
      const selected = b.row === this.selectedRow;
      const pts = this.corners(b);
      // under the box's lowest corner on screen: the rotation handle is in front, above
      const low = pts.reduce((a, p) => (p.py > a.py || (p.py === a.py && p.px < a.px) ? p : a));
      const text = `${b.index + 1} ${b.label || gettext("no label")}`;
      this.tag(ctx, text, low.px + 4, low.py + 14, selected ? SELECTED : this.colourOf(b.label));
    }
    const b = this.selected();
    if (b) {
      const hs = this.handles(b);
      const rot = hs[hs.length - 1];
      ctx.strokeStyle = SELECTED;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(rot.from.px, rot.from.py);
      ctx.lineTo(rot.px, rot.py);
      ctx.stroke();
      for (const hd of hs) {
        const active = this.hover && this.hover.handle && this.hover.handle.kind === hd.kind &&
          this.hover.handle.sx === hd.sx && this.hover.handle.sy === hd.sy;
        ctx.fillStyle = active ? SELECTED : "#ffffff";
        ctx.strokeStyle = "#0f131a";
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        if (hd.kind === "rotate") ctx.arc(hd.px, hd.py, 6, 0, 2 * Math.PI);
        else ctx.rect(hd.px - 4.5, hd.py - 4.5, 9, 9);
        ctx.fill();
        ctx.stroke();
      }
    }
    if (this.drag && this.drag.kind === "draw" && this.drag.moved) {
      const a = this.worldToBev(this.drag.start.x, this.drag.start.y);
      const c = this.worldToBev(this.drag.now.x, this.drag.now.y);
      ctx.setLineDash([6, 4]);
      ctx.strokeStyle = SELECTED;
      ctx.lineWidth = 1.5;
      ctx.strokeRect(Math.min(a.px, c.px), Math.min(a.py, c.py), Math.abs(c.px - a.px), Math.abs(c.py - a.py));
      ctx.setLineDash([]);
      const l = Math.abs(this.drag.now.x - this.drag.start.x), wd = Math.abs(this.drag.now.y - this.drag.start.y);
      this.tag(ctx, `${l.toFixed(2)} × ${wd.toFixed(2)} m`, Math.max(a.px, c.px) + 6, Math.max(a.py, c.py) + 4, SELECTED);
    }
    this.drawScale(ctx, w, h);
    this.drawCompass(ctx);
  },

  drawScale(ctx, w, h) {
    const nice = [0.5, 1, 2, 5, 10, 20, 50, 100, 200];
    const metres = nice.find((m) => m / this.mpp >= 70) || nice[nice.length - 1];
    const len = metres / this.mpp;
    const x = 14, y = h - 16;
    ctx.strokeStyle = "#e6ebf3";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(x, y - 5);
    ctx.lineTo(x, y);
    ctx.lineTo(x + len, y);
    ctx.lineTo(x + len, y - 5);
    ctx.stroke();
    ctx.fillStyle = "#e6ebf3";
    ctx.fillText(`${metres} m`, x + len + 6, y - 2);
    if (this.pointer) {
      const p = this.pointer;
      const text = `x ${p.x.toFixed(2)} m   y ${p.y.toFixed(2)} m`;
      ctx.textAlign = "right";
      ctx.fillText(text, w - 12, y - 2);
      ctx.textAlign = "left";
    }
  },

  drawCompass(ctx) {
    const x = 30, y = 44;
    ctx.strokeStyle = "#e6ebf3";
    ctx.fillStyle = "#e6ebf3";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(x, y);
    ctx.lineTo(x, y - 18);
    ctx.moveTo(x, y);
    ctx.lineTo(x - 18, y);
    ctx.stroke();
    ctx.beginPath();
    ctx.moveTo(x, y - 22);
    ctx.lineTo(x - 3.5, y - 15);
    ctx.lineTo(x + 3.5, y - 15);
    ctx.fill();
    ctx.beginPath();
    ctx.moveTo(x - 22, y);
    ctx.lineTo(x - 15, y - 3.5);
    ctx.lineTo(x - 15, y + 3.5);
    ctx.fill();
    ctx.fillText("x", x + 5, y - 16);
    ctx.fillText("y", x - 22, y + 10);
  },

  drawPerspLabels() {
    const canvas = this.perspLabels;
    if (!canvas.clientWidth) return;
    const ctx = this.overlayContext(canvas);
    const w = canvas.clientWidth, h = canvas.clientHeight;
    const v = new THREE.Vector3();
    for (const b of this.boxes) {
      if (!b.valid) continue;
      v.set(b.cx, b.cy, b.cz + b.h / 2).project(this.perspCamera);
      if (v.z > 1 || v.z < -1) continue;
      const px = ((v.x + 1) / 2) * w, py = ((1 - v.y) / 2) * h;
      if (px < -50 || px > w || py < 0 || py > h + 20) continue;
      const selected = b.row === this.selectedRow;
      this.tag(ctx, `${b.index + 1} ${b.label || gettext("no label")}`, px - 12, py - 14, selected ? SELECTED : this.colourOf(b.label));
    }
  },
};
