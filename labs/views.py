"""Lab pages: the labs list (staff create labs there) and a lab's page, where staff appoint
and remove its admins and its admins add and remove its members (labs.services' rule)."""

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render

from labs import services as labs
from labs.services import LabRefused
from projects import selectors
from projects.forms import LabMemberForm
from projects.models import Lab


class LabForm(forms.Form):
    name = forms.CharField(max_length=200)
    slug = forms.SlugField(
        max_length=100, required=False, help_text="For its address; made from the name if empty."
    )
    admins = forms.CharField(
        required=False,
        label="Lab admins",
        help_text="Usernames, separated by spaces or commas (optional).",
    )

    def clean_admins(self):
        names = self.cleaned_data["admins"].replace(",", " ").split()
        try:
            return [labs.account(name) for name in dict.fromkeys(names)]
        except LabRefused as exc:
            raise forms.ValidationError(str(exc)) from None


def _refused(request, exc: LabRefused, page):
    messages.error(request, str(exc))
    response = page()
    response.status_code = exc.status
    return response


@login_required
def lab_list(request):
    """The labs one belongs to (staff: every lab); staff create labs here."""
    form = LabForm()
    status = 200
    if request.method == "POST":
        form = LabForm(request.POST)
        if not request.user.is_staff:
            exc = labs.refuse(request.user, "create a lab", "Only staff create labs.", 403)
            return _refused(request, exc, lambda: _lab_list_page(request, LabForm()))
        if form.is_valid():
            try:
                lab = labs.create_lab(actor=request.user, **form.cleaned_data)
            except LabRefused as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Created the lab {lab.name}.")
                return redirect("lab-detail", slug=lab.slug)
        status = 400
    return _lab_list_page(request, form, status)


def _lab_list_page(request, form, status=200):
    return render(
        request,
        "labs/lab_list.html",
        {
            "labs": selectors.labs_with_people(request.user).order_by("name"),
            "form": form,
            "can_create": request.user.is_staff,
        },
        status=status,
    )


def _person(request):
    """The account a row's button names (its pk), or None."""
    for action in ("remove", "make_admin", "make_member"):
        if action in request.POST:
            text = request.POST[action].strip()
            user = None
            if text.isascii() and text.isdigit() and len(text) <= 18:
                user = get_user_model().objects.filter(pk=int(text)).first()
            return action, user
    return None, None


@login_required
def lab_detail(request, slug):
    """The lab's projects and people. Staff appoint and remove admins; the lab's admins add
    and remove members; a refusal is shown with its reason and status (labs.services)."""
    try:
        lab = labs.visible_lab(request.user, slug, changing=request.method == "POST")
    except LabRefused as exc:
        raise Http404(str(exc)) from None
    form = LabMemberForm()
    if request.method != "POST":
        return _lab_page(request, lab, form)
    action, user = _person(request)
    try:
        if action and user is None:
            verb = "remove" if action == "remove" else "appoint"
            raise LabRefused(f"Nobody to {verb}: the form named no known account.", 400)
        if action == "remove":
            change = labs.remove_person(actor=request.user, lab=lab, user=user)
            messages.success(request, f"{change.username} left {lab.name}.")
            return redirect("lab-detail", slug=slug)
        if action:
            is_admin = action == "make_admin"
            change = labs.add_person(actor=request.user, lab=lab, user=user, is_admin=is_admin)
            role = "a lab admin" if is_admin else "a member"
            messages.success(request, f"{change.username} is now {role} of {lab.name}.")
            return redirect("lab-detail", slug=slug)
        if not labs.may_administer(request.user, lab):
            raise labs.refuse(
                request.user,
                f"add people to {lab.slug}",
                f"Only the admins of {lab.name} or staff add its people.",
                403,
            )
        form = LabMemberForm(request.POST)
        if form.is_valid():
            user, is_admin = form.cleaned_data["username"], form.cleaned_data["is_admin"]
            change = labs.add_person(actor=request.user, lab=lab, user=user, is_admin=is_admin)
            role = "a lab admin" if is_admin else "a member"
            messages.success(request, f"{change.username} is now {role} of {lab.name}.")
            return redirect("lab-detail", slug=slug)
    except LabRefused as exc:
        return _refused(request, exc, lambda: _lab_page(request, lab, form))
    return _lab_page(request, lab, form, status=400)


def _lab_page(request, lab: Lab, form, status=200):
    return render(
        request,
        "labs/lab_detail.html",
        {
            "lab": lab,
            "is_admin": labs.may_administer(request.user, lab),
            "is_staff": request.user.is_staff,
            "members": selectors.lab_members(lab),
            "projects": selectors.visible_projects(request.user).filter(lab=lab),
            "form": form,
        },
        status=status,
    )
