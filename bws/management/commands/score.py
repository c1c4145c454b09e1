from django.core.management.base import BaseCommand, CommandError

from bws import selectors, services
from bws.core.scoring import METHODS
from bws.models import ScoreRun
from projects.models import Project


class Command(BaseCommand):
    help = "Score a project's BWS scheme in the foreground (the same service as the workers)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--scheme", help="BWS scheme (default: every BWS scheme)")
        parser.add_argument("--method", choices=list(METHODS), help="default: the scheme's")
        parser.add_argument("--bootstrap", type=int, help="resamples for the intervals")
        parser.add_argument("--output", help="also write the score table here (.tsv or .csv)")

    def handle(self, *args, **options):
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"no project with slug {options['slug']!r}")
        schemes = selectors.bws_scheme_names(project)
        if not schemes:
            raise CommandError(f"{project.slug} has no best-worst scheme")
        if options["scheme"]:
            if options["scheme"] not in schemes:
                raise CommandError(
                    f"no best-worst scheme {options['scheme']!r} (schemes: {', '.join(schemes)})"
                )
            schemes = [options["scheme"]]
        if options["output"] and len(schemes) > 1:
            raise CommandError("--output needs --scheme when the project has several schemes")
        for scheme in schemes:
            try:
                run = services.request_run(
                    project=project,
                    scheme=scheme,
                    method=options["method"],
                    bootstrap=options["bootstrap"],
                    trigger=ScoreRun.Trigger.COMMAND,
                )
                run = services.execute_run(run.pk)
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(run.stats_text or f"Schema: {scheme}\nAnnotations: 0")
            if options["output"]:
                path = services.write_run_table(run, options["output"])
                self.stdout.write(f"wrote {path}")
