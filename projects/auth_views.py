"""Log-in with throttling: repeated failures for one account or one address are refused
for a while, so passwords cannot be guessed at speed."""

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.core.cache import cache

LIMIT = getattr(settings, "LOGIN_FAILURE_LIMIT", 10)
WINDOW = getattr(settings, "LOGIN_FAILURE_WINDOW", 300)


def _keys(request) -> list[str]:
    address = request.META.get("REMOTE_ADDR", "")
    username = (request.POST.get("username") or "").strip().lower()
    return [f"login-fail:addr:{address}", f"login-fail:user:{username}"]


class ThrottledLoginView(LoginView):
    def post(self, request, *args, **kwargs):
        if any((cache.get(key) or 0) >= LIMIT for key in _keys(request)):
            form = self.get_form()
            form.errors.clear()
            form.add_error(
                None,
                f"Too many failed attempts. Wait {WINDOW // 60} minutes, or reset your password.",
            )
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        for key in _keys(self.request):
            cache.add(key, 0, WINDOW)
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, WINDOW)
        return super().form_invalid(form)
