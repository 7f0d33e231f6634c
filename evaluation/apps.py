from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self):
        from . import receivers  # noqa: F401  (connects the signal receivers)
