import re
from dataclasses import dataclass

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.validators import validate_email
from django.db.models import Q
from django.db.models.functions import Lower

from projects.invites import invite_lifetime
from projects.models import Lab, Membership
from projects.uploads import file_limit_bytes, file_too_large, total_limit_bytes, total_too_large


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(d, initial) for d in data]
        return [single(data, initial)] if data else []


class ProjectUploadForm(forms.Form):
    lab = forms.ModelChoiceField(queryset=Lab.objects.none(), empty_label=None)
    config_file = forms.FileField(
        label="Configuration (YAML)",
        help_text="A project config in either dialect (annotation_task_name or task_name).",
    )
    data_files = MultipleFileField(
        label="Data files",
        help_text="The files its data_files list names: .jsonl, .json, .csv or .tsv.",
    )

    def __init__(self, *args, labs, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["lab"].queryset = labs

    def clean_config_file(self):
        upload = self.cleaned_data["config_file"]
        if not upload.name.lower().endswith((".yaml", ".yml")):
            raise forms.ValidationError("The configuration must be a .yaml or .yml file.")
        limit = settings.CONFIG_MAX_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                f"{upload.name}: the file is larger than the limit of {limit} bytes "
                "(CONFIG_MAX_BYTES)"
            )
        return upload

    def clean_data_files(self):
        uploads = self.cleaned_data["data_files"]
        for upload in uploads:
            if upload.size > file_limit_bytes():
                raise forms.ValidationError(file_too_large(upload.name))
        return uploads

    def clean(self):
        cleaned = super().clean()
        uploads = [cleaned.get("config_file")] + list(cleaned.get("data_files") or [])
        if sum(upload.size for upload in uploads if upload is not None) > total_limit_bytes():
            raise forms.ValidationError(total_too_large())
        return cleaned


USERNAME_RE = re.compile(r"^[\w.@+-]{1,150}$")


@dataclass
class MemberEntry:
    """One entry of a pasted member list and what became of it."""

    text: str
    user: object = None
    outcome: str = ""  # added, member, unknown, invalid, repeated
    detail: str = ""


def split_entries(text: str) -> list[str]:
    """The entries of a pasted list: separated by commas, semicolons, spaces or newlines."""
    return [e for e in re.split(r"[\s,;]+", text) if e]


def resolve_entry(text: str, by_name: dict, by_email: dict) -> MemberEntry:
    """The account an entry names (a username, else an e-mail address), or why none."""
    entry = MemberEntry(text=text)
    if text in by_name:
        entry.user = by_name[text]
        return entry
    if "@" in text:
        try:
            validate_email(text)
        except forms.ValidationError:
            entry.outcome, entry.detail = "invalid", "not a valid e-mail address"
            return entry
        users = by_email.get(text.lower(), [])
        if len(users) == 1:
            entry.user = users[0]
        elif users:
            entry.outcome = "unknown"
            entry.detail = f"{len(users)} accounts share this address: give the username"
        else:
            entry.outcome, entry.detail = "unknown", "no account has this e-mail address"
    elif not USERNAME_RE.match(text):
        entry.outcome = "invalid"
        entry.detail = "a username has at most 150 letters, digits and @ . + - _"
    else:
        entry.outcome, entry.detail = "unknown", "no account has this username"
    return entry


class AddMembersForm(forms.Form):
    usernames = forms.CharField(
        label="Usernames or e-mail addresses",
        help_text="Existing accounts, one per line or separated by commas or spaces.",
        widget=forms.Textarea(attrs={"rows": 3, "cols": 40}),
        max_length=20_000,
    )
    role = forms.ChoiceField(
        choices=Membership.Role.choices, initial=Membership.Role.ANNOTATOR, required=False
    )
    create_missing = forms.BooleanField(
        required=False,
        label="Create accounts for names nobody has yet and show their invite links",
    )

    def clean_role(self):
        return self.cleaned_data.get("role") or Membership.Role.ANNOTATOR

    def clean_usernames(self):
        """Each entry resolved to an account, or marked unknown, invalid or repeated with the
        reason; such entries leave the form valid, so the known ones are still added."""
        texts = split_entries(self.cleaned_data["usernames"])
        if len(texts) > 500:
            raise forms.ValidationError("At most 500 entries at a time.")
        emails = {t.lower() for t in texts if "@" in t}
        names = set(texts)
        users = (
            get_user_model()
            .objects.annotate(email_lower=Lower("email"))
            .filter(Q(username__in=names) | Q(email_lower__in=emails))
        )
        by_name, by_email = {}, {}
        for user in users:
            if user.username in names:
                by_name[user.username] = user
            if user.email_lower in emails:
                by_email.setdefault(user.email_lower, []).append(user)
        entries, seen = [], set()
        for text in texts:
            entry = resolve_entry(text, by_name, by_email)
            if entry.user is not None and entry.user.pk in seen:
                entry.outcome, entry.detail = "repeated", "the same account as an earlier entry"
                entry.user = None
            elif entry.user is not None:
                seen.add(entry.user.pk)
            entries.append(entry)
        if not entries:
            raise forms.ValidationError("Give at least one username or e-mail address.")
        return entries


class LabMemberForm(forms.Form):
    username = forms.CharField()
    is_admin = forms.BooleanField(required=False, label="Lab admin")

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise forms.ValidationError(f"No account named {name}.")
        return user


class InviteForm(forms.Form):
    prefix = "invite"  # the members form on the same page has a role field too

    username = forms.CharField(
        max_length=150,
        validators=[UnicodeUsernameValidator()],
        help_text="Letters, digits and @ . + - _ only.",
    )
    email = forms.EmailField(
        label="E-mail address (optional)",
        required=False,
        help_text="If given, the invite link is also sent there.",
    )
    role = forms.ChoiceField(
        choices=Membership.Role.choices, initial=Membership.Role.ANNOTATOR, required=False
    )

    def clean_username(self):
        return self.cleaned_data["username"].strip()

    def lifetime_days(self) -> int:
        return invite_lifetime().days

    def clean_role(self):
        return self.cleaned_data.get("role") or Membership.Role.ANNOTATOR
