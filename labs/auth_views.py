"""Account pages that Django's own views serve with one more rule. Logins need none: every
login form is guarded by django-axes (labs/login_protection.py)."""

from django.contrib import messages
from django.contrib.auth.views import LogoutView, PasswordResetView

from labs.login_protection import allow_password_reset, client_address, password_reset_refusal


class ThrottledPasswordResetView(PasswordResetView):
    """The reset form, refused with 429 once the address or the e-mail address asked for
    too many reset e-mails within the window."""

    def form_valid(self, form):
        if not allow_password_reset(
            address=client_address(self.request), email=form.cleaned_data["email"]
        ):
            form.add_error(None, password_reset_refusal())
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().form_valid(form)


class LogoutWithMessageView(LogoutView):
    """Django's logout, saying so on the page it lands on."""

    def post(self, request, *args, **kwargs):
        was_logged_in = request.user.is_authenticated
        response = super().post(request, *args, **kwargs)
        if was_logged_in:
            messages.info(request, "You have logged out.")
        return response
