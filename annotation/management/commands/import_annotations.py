from django.core.management.base import BaseCommand, CommandError

from annotation.annotation_files import AnnotationImportError, import_records, read_import_file
from projects.models import Project


class Command(BaseCommand):
    help = "Import answers in the interchange format into a project, all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("path", help="a .jsonl, .csv or .tsv file, or a folder of .jsonl")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"no project with slug {options['slug']!r}")
        try:
            summary = import_records(project=project, records=read_import_file(options["path"]))
        except AnnotationImportError as exc:
            raise CommandError(f"nothing imported:\n{exc}") from exc
        self.stdout.write(f"imported {summary.annotations} answers from {summary.records} records")
        if summary.created_users:
            self.stdout.write("created inactive accounts: " + ", ".join(summary.created_users))
