// 3D boxes on a point cloud: a bird's-eye view to draw, move, resize and rotate boxes, a side
// view of the selected box for its base and height, and a perspective view to check them
// (three.js, vendored). The table of numbers under the views stays the form: every
// change made here is written into its inputs, and every typed number redraws the box.
import * as THREE from "../vendor/three/three.module.js";
import { OrbitControls } from "../vendor/three/addons/OrbitControls.js";

const FIELDS = ["cx", "cy", "cz", "l", "w", "h", "yaw"];
const DEFAULT_HEIGHT = 1.5; // metres, for a newly drawn box
const MIN_SIZE = 0.1; // metres, the smallest length, width or height a drag or key makes
const MIN_DRAW = 0.2; // metres: a smaller drag on the ground is a click, not a box
const HANDLE_PX = 9; // pick radius of a handle, CSS pixels
const ROTATE_PX = 30; // how far the rotation handle sits in front of the box, CSS pixels
const STEP = { move: 0.1, moveBig: 1, turn: Math.PI / 180, turnBig: Math.PI / 18, height: 0.1, heightBig: 0.5 };
const PALETTE = ["#4fa3ff", "#ff9f43", "#2ed47a", "#ff5c8a", "#b388ff", "#00d1c1", "#a3e635", "#f78fb3"];
const UNLABELLED = "#c7ced9";
const SELECTED = "#ffd400";
const BACKGROUND = 0x0f131a;
// Height ramp (low to high) and intensity ramp (dark to bright) for the points.
const HEIGHT_RAMP = ["#2b4a9b", "#1f9bd1", "#3fcf8e", "#e9d34b", "#f2703a"].map((c) => new THREE.Color(c));
const INTENSITY_RAMP = ["#33405a", "#7b8aa8", "#d6deea", "#ffffff"].map((c) => new THREE.Color(c));

const UNIT_BOX = new THREE.BoxGeometry(1, 1, 1);
const UNIT_EDGES = new THREE.EdgesGeometry(UNIT_BOX);
// Heading marker in box units: a line from the top centre to the front, an arrow head and a
// cross on the front face (+x is the box's front).
const HEADING = new THREE.BufferGeometry().setAttribute(
  "position",
  new THREE.Float32BufferAttribute(
    [
      0, 0, 0.5, 0.5, 0, 0.5,
      0.5, 0, 0.5, 0.32, 0.22, 0.5,
      0.5, 0, 0.5, 0.32, -0.22, 0.5,
      0.5, -0.5, -0.5, 0.5, 0.5, 0.5,
      0.5, 0.5, -0.5, 0.5, -0.5, 0.5,
    ],
    3
  )
);

// Layers: 0 every view (boxes), 1 the bird's-eye and side views' points, 2 the perspective's.
const BEV_LAYER = 1;
const PERSP_LAYER = 2;

function quantile(sorted, q) {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))));
  return sorted[i];
}

function ramp(stops, t, out) {
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  return out.copy(stops[i]).lerp(stops[i + 1], x - i);
}

function fmt(value, digits) {
  const text = String(Number(value.toFixed(digits)));
  return text === "-0" ? "0" : text;
}

function wrapAngle(a) {
  const t = Math.atan2(Math.sin(a), Math.cos(a));
  return t <= -Math.PI ? Math.PI : t;
}

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

function toWorld(b, lx, ly) {
  const c = Math.cos(b.yaw), s = Math.sin(b.yaw);
  return { x: b.cx + lx * c - ly * s, y: b.cy + lx * s + ly * c };
}

function toLocal(b, x, y) {
  const c = Math.cos(b.yaw), s = Math.sin(b.yaw), dx = x - b.cx, dy = y - b.cy;
  return { x: dx * c + dy * s, y: -dx * s + dy * c };
}

// One view's picture of the cloud (points and grid) is kept in a texture and drawn again only
// when its camera or the cloud's colours change; boxes are drawn over it every frame. So a box
// dragged over a large cloud costs a few lines, not the whole cloud, even without a GPU.
class CloudLayer {
  constructor(renderer) {
    this.renderer = renderer;
    this.target = null;
    this.key = "";
    this.scene = new THREE.Scene();
    this.camera = new THREE.OrthographicCamera(-1, 1, 1, -1, 0, 1);
    this.quad = new THREE.Mesh(
      new THREE.PlaneGeometry(2, 2),
      new THREE.MeshBasicMaterial({ depthTest: false, depthWrite: false })
    );
    this.scene.add(this.quad);
  }

  render(cloud, boxes, camera, version) {
    const r = this.renderer;
    const size = r.getDrawingBufferSize(new THREE.Vector2());
    if (!this.target || this.target.width !== size.x || this.target.height !== size.y) {
      if (this.target) this.target.dispose();
      this.target = new THREE.WebGLRenderTarget(size.x, size.y, { samples: 4 });
      this.quad.material.map = this.target.texture;
      this.quad.material.needsUpdate = true;
      this.key = "";
    }
    camera.updateMatrixWorld();
    const key = [version, ...camera.matrixWorld.elements, ...camera.projectionMatrix.elements].join(",");
    if (key !== this.key) {
      r.setRenderTarget(this.target);
      r.render(cloud, camera);
      r.setRenderTarget(null);
      this.key = key;
    }
    r.render(this.scene, this.camera);
    r.autoClear = false;
    r.clearDepth();
    r.render(boxes, camera);
    r.autoClear = true;
  }
}

class BoxViewer {
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
      ? Array.from(this.table.querySelector('select[name$="__label"]').options)
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
    if (!this.table) return this.fail("The box table is missing from this page.");
    if (!webgl2()) {
      return this.fail(
        "This browser cannot draw the point cloud (WebGL 2 is off or unavailable). " +
          "Type each box into the table below; it works the same."
      );
    }
    try {
      this.setUpScene();
    } catch (err) {
      return this.fail("The 3D view could not start (" + err.message + "). Type each box into the table below.");
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

  // ------------------------------------------------------------------ scene and views

  setUpScene() {
    const options = { antialias: true, powerPreference: "low-power" };
    this.bevRenderer = new THREE.WebGLRenderer({ canvas: this.bevGl, ...options });
    this.perspRenderer = new THREE.WebGLRenderer({ canvas: this.perspGl, ...options });
    this.sideRenderer = new THREE.WebGLRenderer({ canvas: this.sideGl, ...options });
    for (const r of [this.bevRenderer, this.perspRenderer, this.sideRenderer]) {
      r.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
      r.setClearColor(BACKGROUND, 1);
    }
    this.scene = new THREE.Scene(); // the cloud: points and grid
    this.boxScene = new THREE.Scene();
    this.cloudVersion = 0; // bumped when the cloud's look changes (colours, grid)
    this.layers = {
      bev: new CloudLayer(this.bevRenderer),
      persp: new CloudLayer(this.perspRenderer),
      side: new CloudLayer(this.sideRenderer),
    };
    this.bevCamera = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.1, 5000);
    this.bevCamera.up.set(1, 0, 0); // x (forward) points up the screen, y (left) to the left
    this.bevCamera.layers.enable(BEV_LAYER);
    this.perspCamera = new THREE.PerspectiveCamera(50, 1, 0.1, 2000);
    this.perspCamera.up.set(0, 0, 1);
    this.perspCamera.layers.enable(PERSP_LAYER);
    this.sideCamera = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.1, 1000);
    this.sideCamera.up.set(0, 0, 1);
    this.sideCamera.layers.enable(BEV_LAYER);
    this.controls = new OrbitControls(this.perspCamera, this.perspGl);
    this.controls.screenSpacePanning = false; // pan along the ground
    this.controls.maxPolarAngle = Math.PI * 0.495;
    this.controls.addEventListener("change", () => this.requestRender());

    this.pointsGeometry = new THREE.BufferGeometry();
    this.bevPoints = new THREE.Points(
      this.pointsGeometry,
      new THREE.PointsMaterial({ size: 2, sizeAttenuation: false, vertexColors: true })
    );
    this.perspPoints = new THREE.Points(
      this.pointsGeometry,
      new THREE.PointsMaterial({ size: 1.6, sizeAttenuation: false, vertexColors: true })
    );
    this.bevPoints.layers.set(BEV_LAYER);
    this.perspPoints.layers.set(PERSP_LAYER);
    this.bevPoints.frustumCulled = this.perspPoints.frustumCulled = false;
    this.scene.add(this.bevPoints, this.perspPoints);
    this.boxGroup = new THREE.Group();
    this.boxScene.add(this.boxGroup);
  }

  makeGrid() {
    if (this.grid) {
      this.scene.remove(this.grid);
      this.grid.geometry.dispose();
    }
    const { x0, x1, y0, y1 } = this.bounds;
    const span = Math.max(x1 - x0, y1 - y0);
    const minor = span > 300 ? 10 : 1;
    const major = minor * 10;
    const ax = Math.floor(x0 / major) * major, bx = Math.ceil(x1 / major) * major;
    const ay = Math.floor(y0 / major) * major, by = Math.ceil(y1 / major) * major;
    const z = this.ground - 0.02;
    const pos = [], col = [];
    const faint = new THREE.Color("#1c2330"), strong = new THREE.Color("#2f3b52");
    const line = (a, b, c) => {
      pos.push(...a, ...b);
      col.push(c.r, c.g, c.b, c.r, c.g, c.b);
    };
    for (let x = ax; x <= bx + 1e-6; x += minor) {
      line([x, ay, z], [x, by, z], Math.abs(x % major) < 1e-6 ? strong : faint);
    }
    for (let y = ay; y <= by + 1e-6; y += minor) {
      line([ax, y, z], [bx, y, z], Math.abs(y % major) < 1e-6 ? strong : faint);
    }
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute("position", new THREE.Float32BufferAttribute(pos, 3));
    geometry.setAttribute("color", new THREE.Float32BufferAttribute(col, 3));
    this.grid = new THREE.LineSegments(geometry, new THREE.LineBasicMaterial({ vertexColors: true }));
    this.grid.renderOrder = -1;
    this.scene.add(this.grid);
    this.cloudVersion++;
  }

  async load() {
    this.root.dataset.state = "loading";
    this.message.textContent = "Loading the point cloud…";
    let buffer;
    try {
      const response = await fetch(this.root.dataset.pointsUrl, { credentials: "same-origin" });
      if (!response.ok) {
        let why = "";
        try {
          why = (await response.text()).trim().slice(0, 200);
        } catch (err) {
          why = "";
        }
        throw new Error(`the server answered ${response.status}${why && !why.startsWith("<") ? ": " + why : ""}`);
      }
      buffer = await response.arrayBuffer();
    } catch (err) {
      this.root.dataset.state = "error";
      this.message.textContent =
        "Could not load the point cloud (" + err.message + "). You can still type the boxes into the table.";
      this.frameBoxes();
      this.makeGrid();
      this.fitView();
      this.requestRender();
      return;
    }
    const usable = buffer.byteLength - (buffer.byteLength % 16);
    this.points = new Float32Array(buffer, 0, usable / 4);
    this.prepareCloud();
    this.root.dataset.state = "ready";
    const n = this.points.length / 4;
    this.message.textContent = n ? "" : "This point cloud has no points; you can still draw boxes on the grid.";
    this.updateInfo();
    this.requestRender();
  }

  prepareCloud() {
    const P = this.points, n = P.length / 4;
    // Bounds, ground and colour scales from a sample: robust to a few stray points far away.
    const stride = Math.max(1, Math.floor(n / 60000));
    const xs = [], ys = [], zs = [], is = [];
    for (let i = 0; i < n; i += stride) {
      const x = P[4 * i], y = P[4 * i + 1], z = P[4 * i + 2], v = P[4 * i + 3];
      if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) continue;
      xs.push(x);
      ys.push(y);
      zs.push(z);
      if (Number.isFinite(v)) is.push(v);
    }
    const num = (a, b) => a - b;
    xs.sort(num);
    ys.sort(num);
    zs.sort(num);
    is.sort(num);
    if (xs.length) {
      const pad = 2;
      this.bounds = {
        x0: quantile(xs, 0.005) - pad,
        x1: quantile(xs, 0.995) + pad,
        y0: quantile(ys, 0.005) - pad,
        y1: quantile(ys, 0.995) + pad,
      };
      this.ground = quantile(zs, 0.05);
    }
    const z0 = xs.length ? quantile(zs, 0.02) : 0;
    const z1 = xs.length ? Math.max(quantile(zs, 0.98), z0 + 0.5) : 1;
    const i1 = is.length ? Math.max(quantile(is, 0.99), 1e-6) : 1;

    const positions = new Float32Array(n * 3);
    this.heightColours = new Float32Array(n * 3);
    this.intensityColours = new Float32Array(n * 3);
    const c = new THREE.Color();
    for (let i = 0; i < n; i++) {
      positions[3 * i] = P[4 * i];
      positions[3 * i + 1] = P[4 * i + 1];
      positions[3 * i + 2] = P[4 * i + 2];
      ramp(HEIGHT_RAMP, (P[4 * i + 2] - z0) / (z1 - z0), c);
      this.heightColours[3 * i] = c.r;
      this.heightColours[3 * i + 1] = c.g;
      this.heightColours[3 * i + 2] = c.b;
      ramp(INTENSITY_RAMP, Math.sqrt(Math.max(0, P[4 * i + 3]) / i1), c);
      this.intensityColours[3 * i] = c.r;
      this.intensityColours[3 * i + 1] = c.g;
      this.intensityColours[3 * i + 2] = c.b;
    }
    this.pointsGeometry.setAttribute("position", new THREE.BufferAttribute(positions, 3));
    this.colourBy(this.colourSelect ? this.colourSelect.value : "height");
    this.makeGrid();
    this.fitView();
    this.resetPerspective();
    this.sync(); // boxes already in the table are drawn over the cloud now that it is known
  }

  // Without a cloud the views frame the boxes already in the table (or 40 m around the origin).
  frameBoxes() {
    const drawn = this.boxes.filter((b) => b.valid);
    if (!drawn.length) return;
    const r = Math.max(...drawn.map((b) => Math.hypot(b.l, b.w) / 2)) + 5;
    this.bounds = {
      x0: Math.min(...drawn.map((b) => b.cx)) - r,
      x1: Math.max(...drawn.map((b) => b.cx)) + r,
      y0: Math.min(...drawn.map((b) => b.cy)) - r,
      y1: Math.max(...drawn.map((b) => b.cy)) + r,
    };
    this.ground = Math.min(...drawn.map((b) => b.cz - b.h / 2));
  }

  colourBy(kind) {
    if (!this.heightColours) return;
    const colours = kind === "intensity" ? this.intensityColours : this.heightColours;
    this.pointsGeometry.setAttribute("color", new THREE.BufferAttribute(colours, 3));
    this.cloudVersion++;
    this.requestRender();
  }

  fitView() {
    const { x0, x1, y0, y1 } = this.bounds;
    const { w, h } = this.bevSize();
    if (!w || !h) return;
    this.centre = { x: (x0 + x1) / 2, y: (y0 + y1) / 2 };
    this.mpp = Math.max((x1 - x0) / h, (y1 - y0) / w);
    this.userView = false;
    this.zoomedRow = null;
    this.updateBevCamera();
  }

  resetPerspective() {
    const { x0, x1, y0, y1 } = this.bounds;
    const r = Math.max(x1 - x0, y1 - y0) / 2;
    const target = new THREE.Vector3((x0 + x1) / 2, (y0 + y1) / 2, this.ground);
    this.controls.target.copy(target);
    this.perspCamera.position.set(target.x - 1.1 * r, target.y + 0.55 * r, target.z + 0.75 * r);
    this.perspCamera.far = Math.max(2000, 8 * r);
    this.perspCamera.updateProjectionMatrix();
    this.controls.update();
  }

  focusPerspective(b) {
    if (!b) return this.resetPerspective();
    const d = 2.2 * Math.max(b.l, b.w, b.h) + 5;
    const back = toWorld(b, -0.8 * d, 0.55 * d);
    this.controls.target.set(b.cx, b.cy, b.cz);
    this.perspCamera.position.set(back.x, back.y, b.cz + 0.6 * d);
    this.controls.update();
    this.requestRender();
  }

  // Z and "Zoom to box": in to the box, and out to the whole cloud the second time.
  toggleZoom(b) {
    const near = b && this.zoomedRow !== b.row;
    if (near) this.zoomTo(b);
    else this.fitView();
    this.zoomedRow = near ? b.row : null;
  }

  // The bird's-eye view around one box (at least 12 m across), or the whole cloud again.
  zoomTo(b) {
    const { w, h } = this.bevSize();
    if (!b || !w || !h) return this.fitView();
    this.centre = { x: b.cx, y: b.cy };
    this.mpp = Math.max(12, 3 * Math.hypot(b.l, b.w)) / Math.min(w, h);
    this.userView = true;
    this.updateBevCamera();
  }

  bevSize() {
    return { w: this.bev.clientWidth, h: this.bev.clientHeight };
  }

  updateBevCamera() {
    const { w, h } = this.bevSize();
    const m = this.mpp, cam = this.bevCamera;
    cam.left = (-w / 2) * m;
    cam.right = (w / 2) * m;
    cam.top = (h / 2) * m;
    cam.bottom = (-h / 2) * m;
    cam.position.set(this.centre.x, this.centre.y, this.ground + 1000);
    cam.lookAt(this.centre.x, this.centre.y, this.ground);
    cam.updateProjectionMatrix();
    // The pixel <-> metre mapping, for anyone scripting the view (and the browser tests).
    this.bev.dataset.metresPerPixel = String(m);
    this.bev.dataset.centreX = String(this.centre.x);
    this.bev.dataset.centreY = String(this.centre.y);
    this.requestRender();
  }

  // CSS pixels of the bird's-eye view (from its top left corner) <-> metres.
  bevToWorld(px, py) {
    const { w, h } = this.bevSize();
    return { x: this.centre.x + (h / 2 - py) * this.mpp, y: this.centre.y + (w / 2 - px) * this.mpp };
  }

  worldToBev(x, y) {
    const { w, h } = this.bevSize();
    return { px: w / 2 - (y - this.centre.y) / this.mpp, py: h / 2 - (x - this.centre.x) / this.mpp };
  }

  resize() {
    for (const [renderer, canvas, overlay] of [
      [this.bevRenderer, this.bevGl, this.bev],
      [this.perspRenderer, this.perspGl, this.perspLabels],
      [this.sideRenderer, this.sideGl, this.side],
    ]) {
      const w = canvas.clientWidth, h = canvas.clientHeight;
      if (!w || !h) continue;
      renderer.setSize(w, h, false);
      const dpr = Math.min(window.devicePixelRatio || 1, 2);
      overlay.width = Math.round(w * dpr);
      overlay.height = Math.round(h * dpr);
    }
    const { w, h } = this.bevSize();
    if (w && h) {
      if (!this.userView) this.fitView();
      else this.updateBevCamera();
    }
    if (this.perspGl.clientHeight) {
      this.perspCamera.aspect = this.perspGl.clientWidth / this.perspGl.clientHeight;
      this.perspCamera.updateProjectionMatrix();
    }
    this.requestRender();
  }

  // gl false: only the 2D overlays changed (hover, a footprint being drawn), not the scene.
  requestRender(gl = true) {
    if (gl) this.glDirty = true;
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  render() {
    if (this.glDirty) {
      this.glDirty = false;
      const v = this.cloudVersion;
      if (this.bevGl.clientWidth) this.layers.bev.render(this.scene, this.boxScene, this.bevCamera, v);
      if (this.perspGl.clientWidth) this.layers.persp.render(this.scene, this.boxScene, this.perspCamera, v);
      this.renderSide();
    }
    this.drawBevOverlay();
    this.drawPerspLabels();
    this.drawSideOverlay();
    this.root.dataset.frames = String(Number(this.root.dataset.frames || 0) + 1);
  }

  // ------------------------------------------------------------------ side view

  // The selected box seen from its right-hand side (its front to the right), cut to a slab
  // as wide as the box so that only its own points show: where its base and top belong.
  // While a drag in this view lasts, its frame stays where the drag began.
  sideFrame() {
    if (this.sideDrag) return this.sideDrag.frame;
    if (this.drag && this.drag.sideFrame) return this.drag.sideFrame;
    const b = this.selected();
    const W = this.side.clientWidth, H = this.side.clientHeight;
    if (!b || !W || !H) return null;
    const m = Math.max((b.l + 3) / W, (b.h + 2.4) / H);
    return { cx: b.cx, cy: b.cy, cz: b.cz, yaw: b.yaw, w: b.w, m, W, H };
  }

  // The side view's pixel <-> metre mapping on its canvas, kept as current as the table.
  markSide() {
    const f = this.sideFrame();
    this.side.dataset.metresPerPixel = f ? String(f.m) : "";
    this.side.dataset.centreZ = f ? String(f.cz) : "";
    return f;
  }

  sidePixel(f, u, z) {
    return { px: f.W / 2 + u / f.m, py: f.H / 2 - (z - f.cz) / f.m };
  }

  sidePoint(f, px, py) {
    return { u: (px - f.W / 2) * f.m, z: f.cz + (f.H / 2 - py) * f.m };
  }

  renderSide() {
    if (!this.sideGl.clientWidth) return;
    const f = this.markSide();
    if (!f) {
      this.sideRenderer.clear();
      return;
    }
    const D = 100, c = Math.cos(f.yaw), s = Math.sin(f.yaw), cam = this.sideCamera;
    cam.position.set(f.cx + s * D, f.cy - c * D, f.cz); // on the box's right, looking left
    cam.lookAt(f.cx, f.cy, f.cz);
    cam.left = (-f.W / 2) * f.m;
    cam.right = (f.W / 2) * f.m;
    cam.top = (f.H / 2) * f.m;
    cam.bottom = (-f.H / 2) * f.m;
    cam.near = D - f.w / 2 - 0.3;
    cam.far = D + f.w / 2 + 0.3;
    cam.updateProjectionMatrix();
    this.layers.side.render(this.scene, this.boxScene, cam, this.cloudVersion);
  }

  sideHandles(f, b) {
    // b in the frame: its centre along the heading and its base and top
    const u = (b.cx - f.cx) * Math.cos(f.yaw) + (b.cy - f.cy) * Math.sin(f.yaw);
    const base = b.cz - b.h / 2, top = b.cz + b.h / 2, mid = b.cz;
    return [
      { kind: "top", ...this.sidePixel(f, u, top) },
      { kind: "bottom", ...this.sidePixel(f, u, base) },
      { kind: "front", ...this.sidePixel(f, u + b.l / 2, mid) },
      { kind: "back", ...this.sidePixel(f, u - b.l / 2, mid) },
    ];
  }

  drawSideOverlay() {
    if (!this.side.clientWidth) return;
    const ctx = this.overlayContext(this.side);
    const f = this.sideFrame(), b = this.selected();
    if (!f || !b) {
      ctx.fillStyle = "#8c97a8";
      ctx.textAlign = "center";
      ctx.fillText("Select a box to see it from the side", this.side.clientWidth / 2, this.side.clientHeight / 2);
      ctx.textAlign = "left";
      return;
    }
    const hs = this.sideHandles(f, b);
    for (const hd of hs) {
      const active = this.sideHover === hd.kind;
      ctx.fillStyle = active ? SELECTED : "#ffffff";
      ctx.strokeStyle = "#0f131a";
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.rect(hd.px - 4.5, hd.py - 4.5, 9, 9);
      ctx.fill();
      ctx.stroke();
    }
    const [top, bottom, front] = hs;
    this.tag(ctx, `height ${b.h.toFixed(2)} m`, top.px + 10, top.py - 12, SELECTED);
    this.tag(ctx, `base ${(b.cz - b.h / 2).toFixed(2)} m`, bottom.px + 10, bottom.py + 12, SELECTED);
    ctx.fillStyle = "#aeb8c8";
    ctx.fillText("front ▸", Math.min(front.px + 8, this.side.clientWidth - 48), front.py);
  }

  sideHit(px, py) {
    const f = this.sideFrame(), b = this.selected();
    if (!f || !b) return null;
    let best = null, bestDistance = HANDLE_PX;
    for (const hd of this.sideHandles(f, b)) {
      const d = Math.hypot(hd.px - px, hd.py - py);
      if (d <= bestDistance) [best, bestDistance] = [hd.kind, d];
    }
    if (best) return best;
    const [top, bottom, front, back] = this.sideHandles(f, b);
    if (px >= back.px && px <= front.px && py >= top.py && py <= bottom.py) return "lift";
    return null;
  }

  onSideDown(e) {
    this.side.focus({ preventScroll: true });
    if (e.button !== 0) return;
    const r = this.side.getBoundingClientRect();
    const px = e.clientX - r.left, py = e.clientY - r.top;
    const kind = this.sideHit(px, py);
    if (!kind) return;
    e.preventDefault();
    this.side.setPointerCapture(e.pointerId);
    const frame = this.sideFrame();
    this.sideDrag = { kind, frame, box: { ...this.selected() }, start: this.sidePoint(frame, px, py) };
  }

  onSideMove(e) {
    const r = this.side.getBoundingClientRect();
    const px = e.clientX - r.left, py = e.clientY - r.top;
    const d = this.sideDrag;
    if (!d) {
      const kind = this.sideHit(px, py);
      if (kind !== this.sideHover) {
        this.sideHover = kind;
        this.requestRender(false);
      }
      const cursors = { top: "ns-resize", bottom: "ns-resize", lift: "ns-resize", front: "ew-resize", back: "ew-resize" };
      this.side.style.cursor = cursors[kind] || "default";
      return;
    }
    const p = this.sidePoint(d.frame, px, py), b = d.box;
    if (!d.moved) this.remember({ kind: "edit", row: b.row, before: this.values(b) });
    d.moved = true;
    const base = b.cz - b.h / 2, top = b.cz + b.h / 2;
    if (d.kind === "top") {
      const h = Math.max(MIN_SIZE, p.z - base);
      this.writeRow(b.row, { ...b, h, cz: base + h / 2 });
    } else if (d.kind === "bottom") {
      const h = Math.max(MIN_SIZE, top - p.z);
      this.writeRow(b.row, { ...b, h, cz: top - h / 2 });
    } else if (d.kind === "lift") {
      this.writeRow(b.row, { ...b, cz: b.cz + p.z - d.start.z });
    } else {
      const sx = d.kind === "front" ? 1 : -1;
      const fixed = (-sx * b.l) / 2;
      const l = Math.max(MIN_SIZE, sx * (p.u - fixed));
      const c = toWorld(b, fixed + (sx * l) / 2, 0);
      this.writeRow(b.row, { ...b, l, cx: c.x, cy: c.y });
    }
  }

  onSideUp(e) {
    if (this.side.hasPointerCapture(e.pointerId)) this.side.releasePointerCapture(e.pointerId);
    if (!this.sideDrag) return;
    this.sideDrag = null;
    this.requestRender();
  }

  // ------------------------------------------------------------------ the table is the form

  rows() {
    return Array.from(this.table.tBodies[0].querySelectorAll("tr.data-row"));
  }

  input(tr, key) {
    return tr.querySelector(`[name="${this.field}__${key}"]`);
  }

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
  }

  blank(tr) {
    return Array.from(tr.querySelectorAll("input, select")).every((el) => el.value.trim() === "");
  }

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
  }

  newRow() {
    const free = this.rows().find((tr) => this.blank(tr));
    if (free) return free;
    const before = this.rows().length;
    const x = window.scrollX, y = window.scrollY;
    if (this.addButton) this.addButton.click(); // the same path as the "Add box" button
    if (this.rows().length === before) {
      const copy = this.rows()[before - 1].cloneNode(true);
      copy.querySelectorAll("input").forEach((el) => (el.value = ""));
      copy.querySelectorAll("select").forEach((el) => (el.selectedIndex = 0));
      this.table.tBodies[0].appendChild(copy);
    }
    window.scrollTo(x, y); // "Add box" moves focus to the new row; the view stays put
    this.bev.focus({ preventScroll: true });
    const rows = this.rows();
    return rows[rows.length - 1];
  }

  removeRow(tr, undoable = true) {
    const gone = this.boxes.find((b) => b.row === tr && b.valid);
    if (undoable && gone) this.remember({ kind: "delete", before: this.values(gone) });
    const button = tr.querySelector(".remove-row");
    if (button) button.click(); // the same path as the row's "Remove" button
    else tr.remove();
    if (this.selectedRow === tr) this.selectedRow = null;
    this.sync();
  }

  sync() {
    this.boxes = this.rows().map((tr, i) => this.readRow(tr, i));
    if (this.selectedRow && !this.boxes.some((b) => b.row === this.selectedRow && b.valid)) {
      this.selectedRow = null;
    }
    this.updateObjects();
    this.updateInfo();
    this.markSide();
    this.requestRender();
  }

  selected() {
    return this.boxes.find((b) => b.row === this.selectedRow && b.valid) || null;
  }

  select(tr) {
    this.selectedRow = tr;
    const b = this.selected();
    if (b && b.label && this.labelSelect) this.labelSelect.value = b.label;
    this.sync();
  }

  colourOf(label) {
    const i = this.labels.indexOf(label);
    return i < 0 ? UNLABELLED : PALETTE[i % PALETTE.length];
  }

  updateObjects() {
    const live = new Set();
    for (const b of this.boxes) {
      if (!b.valid) continue;
      live.add(b.row);
      let obj = this.objects.get(b.row);
      if (!obj) {
        obj = this.makeBoxObject();
        this.objects.set(b.row, obj);
        this.boxGroup.add(obj.group);
      }
      const selected = b.row === this.selectedRow;
      const colour = selected ? SELECTED : this.colourOf(b.label);
      obj.group.position.set(b.cx, b.cy, b.cz);
      obj.group.rotation.set(0, 0, b.yaw);
      obj.inner.scale.set(b.l, b.w, Math.max(b.h, 0.01));
      obj.edges.material.color.set(colour);
      obj.heading.material.color.set(colour);
      obj.fill.material.color.set(colour);
      obj.fill.visible = selected;
      obj.box = b;
    }
    for (const [row, obj] of this.objects) {
      if (live.has(row)) continue;
      this.boxGroup.remove(obj.group);
      for (const part of [obj.edges, obj.heading, obj.fill]) part.material.dispose();
      this.objects.delete(row);
    }
    for (const tr of this.rows()) tr.classList.toggle("boxes3d-selected-row", tr === this.selectedRow);
    if (this.deleteButton) this.deleteButton.disabled = !this.selected();
    if (this.zoomButton) this.zoomButton.disabled = !this.selected();
  }

  makeBoxObject() {
    const group = new THREE.Group();
    const inner = new THREE.Group();
    const edges = new THREE.LineSegments(UNIT_EDGES, new THREE.LineBasicMaterial());
    const heading = new THREE.LineSegments(HEADING, new THREE.LineBasicMaterial());
    const fill = new THREE.Mesh(
      UNIT_BOX,
      new THREE.MeshBasicMaterial({ transparent: true, opacity: 0.14, depthWrite: false })
    );
    inner.add(fill, edges, heading);
    group.add(inner);
    return { group, inner, edges, heading, fill, box: null };
  }

  updateInfo() {
    if (!this.info) return;
    const b = this.selected();
    const count = this.boxes.filter((x) => x.valid).length;
    if (b) {
      const deg = (wrapAngle(b.yaw) * 180) / Math.PI;
      this.info.textContent =
        `Box ${b.index + 1}${b.label ? " · " + b.label : " · no label"} · ` +
        `${b.l.toFixed(2)} × ${b.w.toFixed(2)} × ${b.h.toFixed(2)} m · ` +
        `base ${(b.cz - b.h / 2).toFixed(2)} m · yaw ${deg.toFixed(1)}°`;
    } else {
      const n = this.points.length / 4;
      this.info.textContent =
        `${count} box${count === 1 ? "" : "es"} · ${n.toLocaleString("en")} points` +
        (count ? " · click a box to select it" : " · drag on the ground to draw a box");
    }
  }

  // ------------------------------------------------------------------ bird's-eye overlay

  // Smaller on screen than a few handles: drawn with its corner handles only.
  small(b) {
    return Math.min(b.l, b.w) / this.mpp < 4 * HANDLE_PX;
  }

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
  }

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
  }

  overlayContext(canvas) {
    const ctx = canvas.getContext("2d");
    const dpr = canvas.width / Math.max(1, canvas.clientWidth);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, canvas.clientWidth, canvas.clientHeight);
    ctx.font = "12px system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
    ctx.textBaseline = "middle";
    return ctx;
  }

  tag(ctx, text, x, y, colour) {
    const w = ctx.measureText(text).width + 10;
    ctx.fillStyle = "rgba(15, 19, 26, 0.82)";
    ctx.fillRect(x, y - 9, w, 18);
    ctx.fillStyle = colour;
    ctx.fillRect(x, y - 9, 3, 18);
    ctx.fillStyle = "#eef2f8";
    ctx.fillText(text, x + 6, y);
  }

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
      const text = `${b.index + 1} ${b.label || "no label"}`;
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
  }

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
  }

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
  }

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
      this.tag(ctx, `${b.index + 1} ${b.label || "no label"}`, px - 12, py - 14, selected ? SELECTED : this.colourOf(b.label));
    }
  }

  // ------------------------------------------------------------------ pointer and keys

  eventPixel(e) {
    const r = this.bev.getBoundingClientRect();
    return { px: e.clientX - r.left, py: e.clientY - r.top };
  }

  hitTest(px, py) {
    const b = this.selected();
    if (b) {
      const hs = this.handles(b);
      const near = (hd) => Math.hypot(hd.px - px, hd.py - py);
      const rotate = hs[hs.length - 1];
      if (near(rotate) <= HANDLE_PX) return { box: b, handle: rotate };
      // A box small on screen is crowded by its handles: well inside it is for moving it.
      const p = this.bevToWorld(px, py), q = toLocal(b, p.x, p.y), rim = 4 * this.mpp;
      if (this.small(b) && Math.abs(q.x) < b.l / 2 - rim && Math.abs(q.y) < b.w / 2 - rim) return { box: b };
      let best = null, bestDistance = HANDLE_PX;
      for (const hd of hs) {
        if (near(hd) <= bestDistance) [best, bestDistance] = [hd, near(hd)];
      }
      if (best) return { box: b, handle: best };
    }
    const p = this.bevToWorld(px, py);
    const slack = 3 * this.mpp;
    const inside = this.boxes.filter((x) => {
      if (!x.valid) return false;
      const q = toLocal(x, p.x, p.y);
      return Math.abs(q.x) <= x.l / 2 + slack && Math.abs(q.y) <= x.w / 2 + slack;
    });
    if (!inside.length) return null;
    if (b && inside.includes(b)) return { box: b };
    inside.sort((a, c) => a.l * a.w - c.l * c.w); // the smallest box under the pointer wins
    return { box: inside[0] };
  }

  cursorFor(hit) {
    if (!hit) return "crosshair";
    if (!hit.handle) return "move";
    if (hit.handle.kind === "rotate") return "grab";
    const b = hit.box;
    const dir = toWorld({ ...b, cx: 0, cy: 0 }, hit.handle.sx, hit.handle.sy);
    // screen direction of the handle from the centre: right = -y, up = +x
    const angle = ((Math.atan2(dir.x, -dir.y) * 180) / Math.PI + 360) % 180;
    if (angle < 22.5 || angle >= 157.5) return "ew-resize";
    if (angle < 67.5) return "nesw-resize";
    if (angle < 112.5) return "ns-resize";
    return "nwse-resize";
  }

  onPointerDown(e) {
    const { px, py } = this.eventPixel(e);
    this.bev.focus({ preventScroll: true });
    this.bev.setPointerCapture(e.pointerId);
    if (e.button === 1 || e.button === 2) {
      this.drag = { kind: "pan", px, py, centre: { ...this.centre } };
      e.preventDefault();
      return;
    }
    if (e.button !== 0) return;
    e.preventDefault();
    const p = this.bevToWorld(px, py);
    const hit = this.hitTest(px, py);
    // while a box is dragged here the side view keeps the frame it had: its slab of points
    // is drawn once, not at every step
    if (hit && hit.handle) {
      const sideFrame = this.sideFrame();
      this.drag = { kind: hit.handle.kind, handle: hit.handle, box: { ...hit.box }, start: p, px, py, sideFrame };
    } else if (hit) {
      if (hit.box.row !== this.selectedRow) this.select(hit.box.row);
      const sideFrame = this.sideFrame();
      this.drag = { kind: "move", box: { ...hit.box }, start: p, px, py, sideFrame };
    } else {
      this.drag = { kind: "draw", start: p, now: p, px, py };
    }
  }

  onPointerMove(e) {
    const { px, py } = this.eventPixel(e);
    const p = this.bevToWorld(px, py);
    this.pointer = p;
    const d = this.drag;
    if (!d) {
      const hit = this.hitTest(px, py);
      this.hover = hit;
      this.bev.style.cursor = this.cursorFor(hit);
      this.requestRender(false);
      return;
    }
    if (!d.moved && Math.hypot(px - d.px, py - d.py) < 3) return;
    if (!d.moved && d.box) this.remember({ kind: "edit", row: d.box.row, before: this.values(d.box) });
    d.moved = true;
    if (d.kind === "pan") {
      this.centre = { x: d.centre.x + (py - d.py) * this.mpp, y: d.centre.y + (px - d.px) * this.mpp };
      this.userView = true;
      this.updateBevCamera();
    } else if (d.kind === "draw") {
      d.now = p;
      this.requestRender(false);
    } else if (d.kind === "move") {
      this.writeRow(d.box.row, { ...d.box, cx: d.box.cx + p.x - d.start.x, cy: d.box.cy + p.y - d.start.y });
    } else if (d.kind === "rotate") {
      let yaw = Math.atan2(p.y - d.box.cy, p.x - d.box.cx);
      if (e.shiftKey) yaw = Math.round(yaw / STEP.turnBig) * STEP.turnBig;
      this.bev.style.cursor = "grabbing";
      this.writeRow(d.box.row, { ...d.box, yaw });
    } else {
      this.writeRow(d.box.row, this.resized(d.box, d.handle, p));
    }
  }

  resized(b, handle, p) {
    const q = toLocal(b, p.x, p.y);
    let { l, w } = b;
    let ox = 0, oy = 0;
    if (handle.sx) {
      const fixed = (-handle.sx * b.l) / 2;
      l = Math.max(MIN_SIZE, handle.sx * (q.x - fixed));
      ox = fixed + (handle.sx * l) / 2;
    }
    if (handle.sy) {
      const fixed = (-handle.sy * b.w) / 2;
      w = Math.max(MIN_SIZE, handle.sy * (q.y - fixed));
      oy = fixed + (handle.sy * w) / 2;
    }
    const c = toWorld(b, ox, oy);
    return { ...b, cx: c.x, cy: c.y, l, w };
  }

  onPointerUp(e) {
    const d = this.drag;
    this.drag = null;
    if (this.bev.hasPointerCapture(e.pointerId)) this.bev.releasePointerCapture(e.pointerId);
    if (!d) return;
    if (d.kind === "draw") {
      const l = Math.abs(d.now.x - d.start.x), w = Math.abs(d.now.y - d.start.y);
      if (d.moved && l >= MIN_DRAW && w >= MIN_DRAW) this.create(d.start, d.now);
      else if (!d.moved) this.select(null);
      else this.requestRender(false);
    } else if (d.box) {
      this.requestRender(); // the side view follows the box again
    }
  }

  // Ground under a footprint: the points under a car are the car, so the ground is read
  // around it too. The lowest point of each 1 m cell within 2 m of the footprint, and of
  // those lows a low quartile (cells under the object have high lows, a stray point below
  // the road makes one cell low).
  groundUnder(x0, x1, y0, y1) {
    const P = this.points, m = 2, cell = 1;
    const ax = x0 - m, ay = y0 - m;
    const nx = Math.ceil((x1 - x0 + 2 * m) / cell), ny = Math.ceil((y1 - y0 + 2 * m) / cell);
    const lows = new Float32Array(nx * ny).fill(Infinity);
    for (let i = 0; i < P.length; i += 4) {
      const gx = Math.floor((P[i] - ax) / cell), gy = Math.floor((P[i + 1] - ay) / cell);
      if (gx < 0 || gy < 0 || gx >= nx || gy >= ny) continue;
      const k = gx * ny + gy;
      if (P[i + 2] < lows[k]) lows[k] = P[i + 2];
    }
    const found = Array.from(lows).filter(Number.isFinite).sort((a, b) => a - b);
    return found.length >= 3 ? quantile(found, 0.25) : this.ground;
  }

  create(a, c) {
    const x0 = Math.min(a.x, c.x), x1 = Math.max(a.x, c.x);
    const y0 = Math.min(a.y, c.y), y1 = Math.max(a.y, c.y);
    const h = DEFAULT_HEIGHT;
    const base = this.groundUnder(x0, x1, y0, y1);
    const label = this.labelSelect && this.labelSelect.value ? this.labelSelect.value : "";
    const tr = this.newRow();
    this.remember({ kind: "create", row: tr });
    this.selectedRow = tr;
    this.writeRow(tr, { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, cz: base + h / 2, l: x1 - x0, w: y1 - y0, h, yaw: 0, label });
    this.focusPerspective(this.selected());
    this.bev.focus({ preventScroll: true });
  }

  onWheel(e) {
    e.preventDefault();
    const { px, py } = this.eventPixel(e);
    const p = this.bevToWorld(px, py);
    const { w, h } = this.bevSize();
    this.mpp = Math.min(5, Math.max(0.004, this.mpp * Math.exp(e.deltaY * 0.0015)));
    this.centre = { x: p.x - (h / 2 - py) * this.mpp, y: p.y - (w / 2 - px) * this.mpp };
    this.userView = true;
    this.updateBevCamera();
  }

  onPerspClick(e) {
    if (Math.hypot(e.clientX - this.perspDown.x, e.clientY - this.perspDown.y) > 4) return;
    const r = this.perspGl.getBoundingClientRect();
    const mouse = new THREE.Vector2(((e.clientX - r.left) / r.width) * 2 - 1, -((e.clientY - r.top) / r.height) * 2 + 1);
    const ray = new THREE.Raycaster();
    this.perspCamera.updateMatrixWorld(); // moved since the last frame, maybe
    ray.layers.set(0);
    ray.setFromCamera(mouse, this.perspCamera);
    // every box's faces are hit, shown (the selected one) or not
    const hit = ray.intersectObjects(Array.from(this.objects.values(), (o) => o.fill), false)[0];
    const obj = hit && Array.from(this.objects.values()).find((o) => o.fill === hit.object);
    this.select(obj ? obj.box.row : null);
  }

  // A change by key or by the label list; a key held down is one step to undo.
  nudge(b, change, key = "") {
    const last = this.history[this.history.length - 1], now = Date.now();
    const repeat = last && key && last.key === key && last.row === b.row && now - last.at < 800;
    if (repeat) last.at = now;
    else this.remember({ kind: "edit", row: b.row, before: this.values(b), key, at: now });
    this.writeRow(b.row, { ...b, ...change });
  }

  // ------------------------------------------------------------------ undo

  // What the views changed, the last first (typing in the table has the browser's own undo).
  values(b) {
    return { cx: b.cx, cy: b.cy, cz: b.cz, l: b.l, w: b.w, h: b.h, yaw: b.yaw, label: b.label };
  }

  remember(entry) {
    this.history.push(entry);
    if (this.history.length > 200) this.history.shift();
  }

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
  }

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

    this.root.addEventListener("keydown", (e) => {
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
    });
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

const viewers = {};
document.querySelectorAll(".boxes3d[data-points-url]").forEach((root) => {
  const viewer = new BoxViewer(root);
  viewers[root.dataset.for] = viewer.api();
  viewer.start();
});
window.annolabBoxes = viewers;
