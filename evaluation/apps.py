from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        from annotation.protocols import options

        from . import receivers  # noqa: F401  (connects the signal receivers)
        from . import reliability_tests as tests

        # The import front-ends offer the registered reliability tests (annotation never imports evaluation).
        options.set_choices("qc_test", tests.choices)
        options.set_default("qc_threshold", tests.default_threshold)
