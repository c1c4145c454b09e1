from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from agreement.services import compute_report
from projects.annotation_files import import_records, read_import_file
from projects.models import Lab, Membership, Project
from projects.services import (
    add_lab_member,
    add_project_members,
    import_project,
    mark_model_judge,
)

DEMO_LAB = ("Demo Lab", "demo-lab")
DEMO_USERS = [
    # username, password, is_staff
    ("admin", "annolab-admin", True),
    ("anna", "annolab-anna", False),
    ("ben", "annolab-ben", False),
]
DEMO_PROJECTS = [
    ("mt-ranking", "examples/mt_two_dims/config.yaml"),
]
# slug, config, answers of anna, ben, carla and the model judge
AGREEMENT_DEMO = (
    "agreement-demo",
    "examples/agreement_demo/config.yaml",
    "examples/agreement_demo/annotations.jsonl",
)
DEMO_JUDGE = "judge-gpt"


class Command(BaseCommand):
    help = "Create the demo lab, its users and projects (safe to run again)."

    @transaction.atomic
    def handle(self, *args, **options):
        User = get_user_model()
        lab, _ = Lab.objects.get_or_create(slug=DEMO_LAB[1], defaults={"name": DEMO_LAB[0]})
        users = {}
        for username, password, is_staff in DEMO_USERS:
            user = User.objects.filter(username=username).first()
            if user is None:
                user = User(username=username, email=f"{username}@example.org")
                user.set_password(password)
                user.is_staff = user.is_superuser = is_staff
                user.save()
            users[username] = user
            add_lab_member(lab=lab, user=user, is_admin=is_staff)
        for slug, config in DEMO_PROJECTS:
            if Project.objects.filter(slug=slug).exists():
                continue
            result = import_project(
                config_path=Path(settings.BASE_DIR) / config,
                lab=lab,
                owner=users["admin"],
                slug=slug,
            )
            add_project_members(
                project=result.project, usernames=["anna", "ben"], role=Membership.Role.ANNOTATOR
            )
            self.stdout.write(
                f"demo project {slug}: {result.n_items} items, {result.n_tuples} tuples"
            )
        self.load_agreement_demo(lab, users["admin"])
        self.stdout.write("Demo accounts (username / password):")
        for username, password, is_staff in DEMO_USERS:
            role = "site admin and lab admin" if is_staff else "annotator"
            self.stdout.write(f"  {username} / {password}   ({role})")

    def load_agreement_demo(self, lab, owner):
        slug, config, answers = AGREEMENT_DEMO
        if Project.objects.filter(slug=slug).exists():
            return
        base = Path(settings.BASE_DIR)
        project = import_project(config_path=base / config, lab=lab, owner=owner, slug=slug).project
        add_project_members(
            project=project, usernames=["anna", "ben"], role=Membership.Role.ANNOTATOR
        )
        # Creates the other annotators' accounts (carla, the judge) inactive.
        summary = import_records(project=project, records=read_import_file(base / answers))
        judge = get_user_model().objects.get(username=DEMO_JUDGE)
        mark_model_judge(user=judge, model_name="demo judge")
        compute_report(project=project)
        self.stdout.write(
            f"demo project {slug}: {summary.annotations} answers, agreement report computed"
        )
