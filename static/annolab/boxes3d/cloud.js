// The point cloud: fetched from the server, coloured by height or intensity, a grid on its
// ground, and the ground level under a new box.
import * as THREE from "../../vendor/three/three.module.js";
import { format, gettext } from "../i18n.js";

// Height ramp (low to high) and intensity ramp (dark to bright) for the points.
const HEIGHT_RAMP = ["#2b4a9b", "#1f9bd1", "#3fcf8e", "#e9d34b", "#f2703a"].map((c) => new THREE.Color(c));
const INTENSITY_RAMP = ["#33405a", "#7b8aa8", "#d6deea", "#ffffff"].map((c) => new THREE.Color(c));

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

export const cloudMethods = {
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
  },

  async load() {
    this.root.dataset.state = "loading";
    this.message.textContent = gettext("Loading the point cloud…");
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
        format(gettext("Could not load the point cloud (%(reason)s). You can still type the boxes into the table."), { reason: err.message });
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
    this.message.textContent = n ? "" : gettext("This point cloud has no points; you can still draw boxes on the grid.");
    this.updateInfo();
    this.requestRender();
  },

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
  },

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
  },

  colourBy(kind) {
    if (!this.heightColours) return;
    const colours = kind === "intensity" ? this.intensityColours : this.heightColours;
    this.pointsGeometry.setAttribute("color", new THREE.BufferAttribute(colours, 3));
    this.cloudVersion++;
    this.requestRender();
  },

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
  },
};
