// One box tool on the page: its elements and state, the events it listens to, and what a
// script (or a browser test) may ask of it. Its methods live in the modules imported here.
import * as THREE from "../../vendor/three/three.module.js";
import { cloudMethods } from "./cloud.js";
import { drawingMethods } from "./drawing.js";
import { keyMethods } from "./keys.js";
import { overlayMethods } from "./overlay.js";
import { sceneMethods } from "./scene.js";
import { sideViewMethods } from "./side-view.js";
import { tableMethods } from "./table.js";
import { undoMethods } from "./undo.js";
import { viewMethods } from "./views.js";
import { format, gettext } from "../i18n.js";

function webgl2() {
  try {
    const gl = document.createElement("canvas").getContext("webgl2");
    const lose = gl && gl.getExtension("WEBGL_lose_context");
    if (lose) lose.loseContext(); // a page has few contexts: the probe gives its back
    return !!gl;
  } catch (err) {
    return false;
  }
}

export class BoxViewer {
  constructor(root) {
    this.root = root;
    this.field = root.dataset.for;
    this.table = document.querySelector(`table[data-rows="${this.field}"]`);
    this.addButton = document.querySelector(`.add-row[data-for="${this.field}"]`);
    this.bevPane = root.querySelector(".boxes3d-bev-pane");
    this.perspPane = root.querySelector(".boxes3d-persp-pane");
    this.bevGl = this.bevPane.querySelector(".boxes3d-gl");
    this.bev = this.bevPane.querySelector(".boxes3d-overlay");
    this.perspGl = this.perspPane.querySelector(".boxes3d-gl");
    this.perspLabels = this.perspPane.querySelector(".boxes3d-overlay");
    this.sidePane = root.querySelector(".boxes3d-side-pane");
    this.sideGl = this.sidePane.querySelector(".boxes3d-gl");
    this.side = this.sidePane.querySelector(".boxes3d-overlay");
    this.labelSelect = root.querySelector(".boxes3d-label");
    this.colourSelect = root.querySelector(".boxes3d-colour");
    this.deleteButton = root.querySelector(".boxes3d-delete");
    this.zoomButton = root.querySelector(".boxes3d-zoom");
    this.message = root.querySelector(".boxes3d-message");
    this.info = root.querySelector(".boxes3d-info");
    this.labels = this.table
      ? Array.from(this.rowTemplate().querySelector('select[name$="__label"]').options)
          .map((o) => o.value)
          .filter(Boolean)
      : [];
    this.points = new Float32Array(0);
    this.ground = 0;
    this.bounds = { x0: -20, x1: 20, y0: -20, y1: 20 };
    this.centre = { x: 0, y: 0 };
    this.mpp = 0.1; // metres per CSS pixel in the bird's-eye view
    this.userView = false; // zoomed or panned by hand: a resize keeps the scale
    this.boxes = [];
    this.objects = new Map(); // table row -> three.js group
    this.selectedRow = null;
    this.history = []; // undo steps, see undo()
    this.drag = null;
    this.hover = null;
    this.frame = 0;
  }

  start() {
    this.root.hidden = false;
    if (!this.table) return this.fail(gettext("The box table is missing from this page."));
    if (!webgl2()) {
      return this.fail(
        gettext(
          "This browser cannot draw the point cloud (WebGL 2 is off or unavailable). Type each box into the table below; it works the same."
        )
      );
    }
    try {
      this.setUpScene();
    } catch (err) {
      return this.fail(format(gettext("The 3D view could not start (%(reason)s). Type each box into the table below."), { reason: err.message }));
    }
    this.listen();
    this.sync();
    this.resize();
    this.load();
  }

  fail(text) {
    this.root.dataset.state = "unavailable";
    this.root.classList.add("boxes3d-off");
    this.message.textContent = text;
  }

  listen() {
    new ResizeObserver(() => this.resize()).observe(this.bevPane);
    new ResizeObserver(() => this.resize()).observe(this.perspPane);
    new ResizeObserver(() => this.resize()).observe(this.sidePane);
    new MutationObserver(() => this.sync()).observe(this.table.tBodies[0], { childList: true });
    this.table.addEventListener("input", () => this.sync());
    this.table.addEventListener("change", () => this.sync());
    this.table.addEventListener("focusin", (e) => {
      const tr = e.target.closest("tr.data-row");
      if (tr && tr !== this.selectedRow && this.readRow(tr, 0).valid) this.select(tr);
    });

    this.bev.addEventListener("pointerdown", (e) => this.onPointerDown(e));
    this.bev.addEventListener("pointermove", (e) => this.onPointerMove(e));
    this.bev.addEventListener("pointerup", (e) => this.onPointerUp(e));
    this.bev.addEventListener("pointercancel", (e) => this.onPointerUp(e));
    this.bev.addEventListener("pointerleave", () => {
      this.pointer = null;
      this.requestRender(false);
    });
    this.bev.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    this.bev.addEventListener("contextmenu", (e) => e.preventDefault());
    this.bev.addEventListener("dblclick", () => this.focusPerspective(this.selected()));
    this.perspGl.addEventListener("pointerdown", (e) => {
      this.perspDown = { x: e.clientX, y: e.clientY };
      this.perspGl.focus({ preventScroll: true });
    });
    this.perspGl.addEventListener("click", (e) => this.onPerspClick(e));
    this.side.addEventListener("pointerdown", (e) => this.onSideDown(e));
    this.side.addEventListener("pointermove", (e) => this.onSideMove(e));
    this.side.addEventListener("pointerup", (e) => this.onSideUp(e));
    this.side.addEventListener("pointercancel", (e) => this.onSideUp(e));
    this.side.addEventListener("contextmenu", (e) => e.preventDefault());

    this.root.addEventListener("keydown", (e) => this.onKeyDown(e));
    if (this.labelSelect) {
      this.labelSelect.addEventListener("change", () => {
        const b = this.selected();
        if (b) this.nudge(b, { label: this.labelSelect.value });
      });
    }
    if (this.colourSelect) this.colourSelect.addEventListener("change", () => this.colourBy(this.colourSelect.value));
    if (this.deleteButton) {
      this.deleteButton.addEventListener("click", () => {
        const b = this.selected();
        if (b) this.removeRow(b.row);
      });
    }
    if (this.zoomButton) this.zoomButton.addEventListener("click", () => this.toggleZoom(this.selected()));
    const reset = this.root.querySelector(".boxes3d-reset");
    if (reset) {
      reset.addEventListener("click", () => {
        this.fitView();
        this.resetPerspective();
        this.requestRender();
      });
    }
  }

  // What a script (or a browser test) can ask of this viewer.
  api() {
    const pick = (b) => ({ cx: b.cx, cy: b.cy, cz: b.cz, l: b.l, w: b.w, h: b.h, yaw: b.yaw, label: b.label });
    return {
      state: () => this.root.dataset.state,
      pointCount: () => this.points.length / 4,
      bevToWorld: (px, py) => this.bevToWorld(px, py),
      worldToBev: (x, y) => this.worldToBev(x, y),
      // CSS pixels of a point in the perspective view, from its top left corner
      perspectivePixel: (x, y, z) => {
        this.perspCamera.updateMatrixWorld(); // moved since the last frame, maybe
        const v = new THREE.Vector3(x, y, z).project(this.perspCamera);
        return { px: ((v.x + 1) / 2) * this.perspGl.clientWidth, py: ((1 - v.y) / 2) * this.perspGl.clientHeight };
      },
      // boxes as the table holds them
      boxes: () => this.boxes.filter((b) => b.valid).map(pick),
      // boxes as drawn in the views (read back from the three.js scene)
      drawn: () =>
        Array.from(this.objects.values(), (o) => ({
          cx: o.group.position.x,
          cy: o.group.position.y,
          cz: o.group.position.z,
          l: o.inner.scale.x,
          w: o.inner.scale.y,
          h: o.inner.scale.z,
          yaw: o.group.rotation.z,
          selected: o.box.row === this.selectedRow,
        })),
      selected: () => {
        const b = this.selected();
        return b ? b.index : null;
      },
    };
  }
}

// One viewer's state is read and written by every concern (the table, the views, the mouse,
// the keys), so each module holds methods of this one class and `this` is the viewer in all.
Object.assign(
  BoxViewer.prototype,
  cloudMethods,
  sceneMethods,
  viewMethods,
  sideViewMethods,
  tableMethods,
  overlayMethods,
  drawingMethods,
  undoMethods,
  keyMethods
);
