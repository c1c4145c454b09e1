"""What the annotate pages add to the site's Content-Security-Policy.

wavesurfer.js (static/vendor/wavesurfer, drawing segment timelines) writes one constant
<style> element into its shadow root, which style-src 'self' blocks. The annotate pages
allow exactly that text by its hash, never inline styles in general. The text holds the
lane height set in static/annolab/timeline/lanes.js (LANE_HEIGHT); tests recompute the hash from
the vendored file, and the browser tests fail on any CSP violation.
"""

from csp.decorators import csp_update

WAVEFORM_LANE_HEIGHT = 64
# sha256 of wavesurfer.js 8.0.1's shadow-root style at WAVEFORM_LANE_HEIGHT pixels.
WAVEFORM_STYLE_HASH = "'sha256-fF0LBso7Nz75zaFRDBUefBDvPe19hjaiDnnc8lt+2Js='"

allow_waveform_style = csp_update({"style-src": [WAVEFORM_STYLE_HASH]})
