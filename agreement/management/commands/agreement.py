import json

from django.core.management.base import BaseCommand, CommandError

from agreement.core.report import AgreementInputError, format_text
from agreement.services import compute_report
from projects.models import Project


class Command(BaseCommand):
    help = "Compute a project's inter-annotator agreement report, store it and print it."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--format", choices=["json", "text"], default="text")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"no project with slug {options['slug']!r}")
        try:
            stored = compute_report(project=project)
        except AgreementInputError as exc:
            raise CommandError(str(exc)) from exc
        if options["format"] == "json":
            self.stdout.write(json.dumps(stored.report, indent=2))
        else:
            self.stdout.write(format_text(stored.report), ending="")
