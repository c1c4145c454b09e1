"""Best-worst scaling: the best and the worst item of the tuple shown."""

from __future__ import annotations

from typing import Any

from .base import SchemeType, short

# The keys choosing the worst item, by position; the best is 1..8 (so at most 8 items).
WORST_KEYS = "qwertyui"


class BestWorst(SchemeType):
    types = ("bws",)
    template = "projects/schemes/bws.html"
    measure = "bws"
    Options = None
    together = True
    table_keys = ("best", "worst")

    @classmethod
    def validate(cls, value, options, unit, limits) -> Any:
        if not isinstance(value, dict) or set(value) - {"best", "worst"}:
            raise ValueError('give {"best": ITEM_ID, "worst": ITEM_ID}')
        best, worst = value.get("best"), value.get("worst")
        if best in (None, "") or worst in (None, ""):
            missing = " and ".join(k for k in ("best", "worst") if value.get(k) in (None, ""))
            raise ValueError(f"choose the {missing} item")
        for key, chosen in (("best", best), ("worst", worst)):
            if not isinstance(chosen, str | int) or str(chosen) not in unit.items:
                raise ValueError(f"{key} item {short(chosen)} is not in this tuple")
        if str(best) == str(worst):
            raise ValueError("best and worst must be different items")
        return {"best": str(best), "worst": str(worst)}

    @classmethod
    def from_post(cls, name, options, post) -> Any:
        return {
            "best": post.get(f"{name}__best") or None,
            "worst": post.get(f"{name}__worst") or None,
        }

    @classmethod
    def block(cls, views, payload) -> dict:
        """The tuple's items with their keys; the keyboard unless a scheme turns it off."""
        keyboard = all(view["options"].get("sequential_key_binding", True) for view in views)
        items = [
            {**item, "best_key": str(n + 1), "worst_key": WORST_KEYS[n]}
            for n, item in enumerate(payload["items"])
        ]
        return {"items": items, "keyboard": keyboard, "options": views[0]["options"]}

    @classmethod
    def item_display(cls, options) -> dict:
        return {
            "randomize_order": bool(options.get("randomize_order")),
            "show_source": bool(options.get("show_source")),
        }
