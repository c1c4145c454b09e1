"""Receivers for changes to accounts: a new password revokes the account's API tokens and
lifts its login lockout (the owner proved who they are by setting it); a logout is
announced as the end of an annotation session (projects.events.session_ended)."""

from axes.utils import reset as reset_login_failures
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

from labs import tokens
from projects import events


def _password_changed(user, update_fields) -> bool:
    if user.pk is None or (update_fields is not None and "password" not in update_fields):
        return False
    stored = type(user).objects.filter(pk=user.pk).values_list("password", flat=True).first()
    if stored is None or stored == user.password:
        return False
    # check_password() re-hashes a correct password when the hasher's settings change and
    # saves only that field, with no new raw password: that is not a change of password.
    rehash = (
        user._password is None and update_fields is not None and set(update_fields) == {"password"}
    )
    return not rehash


@receiver(pre_save, sender=get_user_model())
def note_password_change(sender, instance, update_fields=None, **kwargs):
    instance._annolab_password_changed = _password_changed(instance, update_fields)


@receiver(post_save, sender=get_user_model())
def revoke_tokens_on_password_change(sender, instance, created, **kwargs):
    if getattr(instance, "_annolab_password_changed", False):
        instance._annolab_password_changed = False
        tokens.revoke_all_tokens(user=instance)
        reset_login_failures(username=instance.get_username())


@receiver(user_logged_out)
def end_session_on_logout(sender, request, user, **kwargs):
    if user is not None:
        events.session_ended.send(sender=type(user), user=user)
