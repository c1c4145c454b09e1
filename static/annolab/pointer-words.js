// Touch screen or mouse: the same media query as the touch hints in annolab.css, so a
// message can say "tap" or "click" (each a whole sentence in the catalogue).
export const TOUCH = matchMedia("(hover: none) and (pointer: coarse)").matches;
