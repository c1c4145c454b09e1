from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model

from .models import Lab, Membership
from .uploads import file_limit_bytes, file_too_large, total_limit_bytes, total_too_large


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


class AddMembersForm(forms.Form):
    usernames = forms.CharField(
        label="Usernames", help_text="Existing accounts, separated by spaces or commas."
    )
    role = forms.ChoiceField(choices=Membership.Role.choices)

    def clean_usernames(self):
        names = [n for n in self.cleaned_data["usernames"].replace(",", " ").split() if n]
        known = set(
            get_user_model().objects.filter(username__in=names).values_list("username", flat=True)
        )
        unknown = [n for n in names if n not in known]
        if unknown:
            raise forms.ValidationError(f"No account named {', '.join(unknown)}.")
        return names


class LabMemberForm(forms.Form):
    username = forms.CharField()
    is_admin = forms.BooleanField(required=False, label="Lab admin")

    def clean_username(self):
        name = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise forms.ValidationError(f"No account named {name}.")
        return user
