"""Static files in production: hashed names, compressed copies, and the imports between
ES modules rewritten to the hashed names too."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    # The box tool and the timeline are ES modules that import each other and the vendored
    # libraries. With hashed imports a browser never runs a new module with an old one
    # (for a minute after a deploy), and every module may be cached for good.
    support_js_module_import_aggregation = True
