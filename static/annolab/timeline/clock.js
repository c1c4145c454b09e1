// Times in seconds: read from a table cell, rounded to hundredths, and written under the
// ruler's ticks at a readable step.

export function round2(seconds) { return Math.round(seconds * 100) / 100; }
export function seconds(text) {
  const trimmed = (text || "").trim();
  if (trimmed === "") return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : NaN;
}
export function niceStep(minimum) {
  const power = Math.pow(10, Math.floor(Math.log10(minimum)));
  for (const m of [1, 2, 5, 10]) if (m * power >= minimum) return m * power;
  return 10 * power;
}
export function clockText(t, step) {
  if (step >= 60 || t >= 600) {
    const m = Math.floor(t / 60);
    const s = Math.round(t - 60 * m);
    return m + ":" + String(s).padStart(2, "0");
  }
  return (step < 1 ? t.toFixed(step < 0.1 ? 2 : 1) : String(Math.round(t))) + " s";
}
