// The word for choosing something on the screen: "tap" on a touch screen, "click" with a
// mouse; the same media query as the touch hints in annolab.css.
export const CLICK = matchMedia("(hover: none) and (pointer: coarse)").matches ? "tap" : "click";
