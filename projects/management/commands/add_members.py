from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from projects.models import Membership, Project
from projects.services import add_project_members, mark_model_judge


class Command(BaseCommand):
    help = "Give users a role in a project, optionally creating their accounts."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument("usernames", nargs="+", metavar="USER")
        parser.add_argument("--role", required=True, choices=Membership.Role.values)
        parser.add_argument("--create", action="store_true", help="create missing accounts")
        parser.add_argument("--password", help="password for the accounts created")
        parser.add_argument(
            "--model", metavar="NAME", help="mark the accounts as model judges of this name"
        )

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"no project with slug {options['slug']!r}")
        if options["password"] and not options["create"]:
            raise CommandError("--password only applies with --create")
        if options["password"]:
            User = get_user_model()
            for username in options["usernames"]:
                try:
                    validate_password(options["password"], user=User(username=username))
                except ValidationError as exc:
                    raise CommandError(
                        f"--password for {username}: {' '.join(exc.messages)}"
                    ) from exc
        try:
            changes = add_project_members(
                project=project,
                usernames=options["usernames"],
                role=options["role"],
                create=options["create"],
                password=options["password"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["model"]:
            for user in get_user_model().objects.filter(username__in=options["usernames"]):
                mark_model_judge(user=user, model_name=options["model"])
        for change in changes:
            created = " (account created)" if change.created_user else ""
            self.stdout.write(f"{change.username}: {change.role} in {project.slug}{created}")
