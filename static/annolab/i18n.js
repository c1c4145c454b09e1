// The scripts' strings in the page's language: the catalogue base.html loads (/jsi18n/)
// defines gettext and ngettext; without it the English text shows.
export const gettext = (text) => (window.gettext ? window.gettext(text) : text);
export const ngettext = (one, many, n) =>
  window.ngettext ? window.ngettext(one, many, n) : n === 1 ? one : many;
// "%(name)s" placeholders filled from `values`, as Django's interpolate does.
export const format = (text, values) => text.replace(/%\((\w+)\)s/g, (_, key) => String(values[key]));
