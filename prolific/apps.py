from django.apps import AppConfig


class ProlificConfig(AppConfig):
    name = "prolific"
    verbose_name = "Prolific"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from annotation.extensions import install_outcome_codes

        from .outcomes import ProlificOutcomeCodes

        install_outcome_codes(ProlificOutcomeCodes())
