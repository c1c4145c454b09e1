from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from projects.models import Lab
from projects.notices import group_notices
from projects.services import ProjectImportError, import_project


class Command(BaseCommand):
    help = "Build a project from a YAML config and its data files; prints the project's slug."

    def add_arguments(self, parser):
        parser.add_argument("config", help="path to the project's YAML config")
        parser.add_argument("--slug", help="slug for the project (default: from its name)")
        parser.add_argument("--lab", help="slug of the lab (default: the site's default lab)")
        parser.add_argument("--owner", help="username that becomes the project's manager")

    def handle(self, *args, **options):
        lab = None
        if options["lab"]:
            lab = Lab.objects.filter(slug=options["lab"]).first()
            if lab is None:
                raise CommandError(f"no lab with slug {options['lab']!r}")
        owner = None
        if options["owner"]:
            owner = get_user_model().objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"no user named {options['owner']!r}")
        try:
            # The operator's own files: the config may name paths anywhere on the server.
            result = import_project(
                config_path=options["config"],
                lab=lab,
                owner=owner,
                slug=options["slug"],
                trusted=True,
            )
        except ProjectImportError as exc:
            raise CommandError(f"project not imported:\n{exc}") from exc
        for notice in group_notices(result.project.notices):
            self.stderr.write(f"notice: {notice.summary}")
        self.stderr.write(
            f"imported {result.project.name!r} into lab {result.project.lab.slug}: "
            f"{result.n_items} items, {result.n_instances} instances, {result.n_tuples} tuples"
        )
        self.stdout.write(result.project.slug)
