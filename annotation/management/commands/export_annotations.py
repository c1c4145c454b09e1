from django.core.management.base import BaseCommand, CommandError

from annotation.annotation_files import write_export
from projects.models import Project


class Command(BaseCommand):
    help = "Write a project's answers in the interchange format (JSON Lines, CSV or TSV)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--output", required=True, help="file to write")
        parser.add_argument("--format", choices=["jsonl", "csv", "tsv"], help="default: suffix")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"no project with slug {options['slug']!r}")
        try:
            n = write_export(project, options["output"], options["format"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"wrote {n} records to {options['output']}")
