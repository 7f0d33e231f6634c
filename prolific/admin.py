"""The Prolific admin: the researcher's token (write-only), the campaign's study with its create/publish actions
(each after a confirmation, carried out by a Celery task), the review page, and the log of actions and calls."""
from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseBadRequest, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from annotation.models import Campaign
from annotation.ownership import is_researcher

from . import tasks
from .models import DEVICES, ProlificAccount, ProlificAction, ProlificCall, ProlificStudy
from .services import review
from .services.study import StudyRefused, entry_url, payment


class ResearcherAdmin(admin.ModelAdmin):
    """Every researcher may use these pages; what each sees is narrowed to their own in `get_queryset`."""

    def has_module_permission(self, request):
        return is_researcher(request.user)

    def has_view_permission(self, request, obj=None):
        return is_researcher(request.user)

    def has_add_permission(self, request):
        return is_researcher(request.user)

    def has_change_permission(self, request, obj=None):
        return is_researcher(request.user)

    def has_delete_permission(self, request, obj=None):
        return is_researcher(request.user)


class LogAdmin(ResearcherAdmin):
    """A log: read, never written by hand."""

    def has_add_permission(self, request):
        return False

    def _never(self, request, obj=None) -> bool:
        return False

    has_change_permission = has_delete_permission = _never


class AccountForm(forms.ModelForm):
    token = forms.CharField(required=False, strip=True, widget=forms.PasswordInput(render_value=False),
                            help_text="Your Prolific API token (Settings → API tokens on Prolific). Stored "
                                      "encrypted and never shown again; leave blank to keep the one set.")
    clear_token = forms.BooleanField(required=False, help_text="Remove the stored token.")

    class Meta:
        model = ProlificAccount
        fields = ("token", "clear_token")


@admin.register(ProlificAccount)
class ProlificAccountAdmin(ResearcherAdmin):
    form = AccountForm
    list_display = ("user", "token_state", "exclusion_group", "updated_at")
    readonly_fields = ("user", "token_state", "exclusion_group")

    def get_queryset(self, request):
        accounts = super().get_queryset(request)
        return accounts if request.user.is_superuser else accounts.filter(user=request.user)

    def has_add_permission(self, request):
        """The add form makes the signed-in user's own account (`save_model`), one per user: a superuser too."""
        return is_researcher(request.user) and not ProlificAccount.objects.filter(user=request.user).exists()

    @admin.display(description="API token")
    def token_state(self, account):
        return "set" if account.has_token else "not set"

    def save_model(self, request, obj, form, change):
        if not change:
            obj.user = request.user
        if form.cleaned_data.get("clear_token"):
            obj.set_token("")
        elif form.cleaned_data.get("token"):
            obj.set_token(form.cleaned_data["token"])
        super().save_model(request, obj, form, change)


class StudyForm(forms.ModelForm):
    devices = forms.MultipleChoiceField(choices=[(d, d) for d in DEVICES], initial=["desktop"],
                                        widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = ProlificStudy
        fields = ("campaign", "name", "description", "devices", "estimated_minutes", "bonus_share")


@admin.register(ProlificStudy)
class ProlificStudyAdmin(ResearcherAdmin):
    form = StudyForm
    list_display = ("campaign", "status", "prolific_id", "places", "reward", "problem")
    actions = ["create_draft", "publish", "sync"]
    readonly_fields = ("status", "prolific_id", "entry_url", "reward", "places", "codes", "payment_check", "problem",
                       "review_link", "published_at")

    def get_queryset(self, request):
        """A study is run with its owner's Prolific account and money: only its owner (and superusers) see it and
        act on it, even where the campaign is shared with other researchers."""
        studies = super().get_queryset(request).select_related("campaign")
        return studies if request.user.is_superuser else studies.filter(owner=request.user)

    #: What the researcher sets; once the study exists on Prolific they are shown, not edited (Prolific has its copy).
    settings_fields = ("campaign", "name", "description", "devices", "estimated_minutes", "bonus_share")

    def get_fields(self, request, obj=None):
        return self.settings_fields + (self.readonly_fields if obj else ())

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        if obj.status == ProlificStudy.Status.NEW:
            return ("campaign",) + self.readonly_fields
        return self.settings_fields + self.readonly_fields

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "campaign":
            # Creating the draft sets the campaign's completion codes: a campaign of one's own only.
            campaigns = Campaign.objects.visible_to(request.user).filter(analysis_only=False)
            kwargs["queryset"] = campaigns if request.user.is_superuser else campaigns.filter(owner=request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        if not change:
            obj.owner = request.user
        obj.entry_url = entry_url(request.build_absolute_uri(
            reverse("annotation:crowd-start", args=[obj.campaign.slug])))
        super().save_model(request, obj, form, change)

    @admin.display(description="payment check")
    def payment_check(self, study):
        if not study.pk:
            return "–"
        try:
            pay = payment(study)
        except StudyRefused as exc:
            return format_html('<strong class="errornote">{}</strong>', exc)
        basis = "median of finished HITs" if pay.measured else "estimate"
        return f"{pay.reward / 100:.2f} per HIT = {pay.hourly / 100:.2f} per hour ({basis}, " \
               f"{pay.seconds / 60:.1f} min). {pay.warning}"

    @admin.display(description="review")
    def review_link(self, study):
        if not study.pk or study.status == ProlificStudy.Status.NEW:
            return "after the study is created"
        return format_html('<a href="{}">Review submissions</a>',
                           reverse("admin:prolific_prolificstudy_review", args=[study.pk]))

    def get_urls(self):
        return [path("<int:pk>/review/", self.admin_site.admin_view(self.review_view),
                     name="prolific_prolificstudy_review")] + super().get_urls()

    def _confirm(self, request, queryset, action: str, verb: str, task):
        if request.POST.get("confirmed") == "yes":
            for study in queryset:
                tasks.queue(task, study)
            self.message_user(request, f"{verb}: queued for {queryset.count()} study(ies); see each study's "
                                       "status and problem.", messages.SUCCESS)
            return None
        return TemplateResponse(request, "prolific/confirm.html", {
            **self.admin_site.each_context(request), "title": f"{verb}?", "studies": queryset, "action": action,
            "verb": verb, "opts": self.model._meta,
            "checked": [(s, self._check(s)) for s in queryset]})

    @staticmethod
    def _check(study):
        try:
            return payment(study)
        except StudyRefused as exc:
            return str(exc)

    @admin.action(description="Create Prolific draft")
    def create_draft(self, request, queryset):
        return self._confirm(request, queryset, "create_draft", "Create the draft study on Prolific",
                             tasks.create_draft)

    @admin.action(description="Publish on Prolific")
    def publish(self, request, queryset):
        return self._confirm(request, queryset, "publish", "Publish on Prolific (participants can start at once)",
                             tasks.publish)

    @admin.action(description="Sync and carry out decisions")
    def sync(self, request, queryset):
        for study in queryset:
            tasks.queue(tasks.review_cycle, study)
        self.message_user(request, "Sync queued.", messages.SUCCESS)

    def review_view(self, request, pk: int):
        study = self.get_queryset(request).filter(pk=pk).first()
        if study is None:
            return HttpResponseRedirect(reverse("admin:prolific_prolificstudy_changelist"))
        context = {**self.admin_site.each_context(request), "title": f"Review on Prolific: {study.campaign.name}",
                   "study": study, "opts": self.model._meta, "categories": review.REJECTION_CATEGORIES.items(),
                   "minimum": review.MIN_REJECTION_MESSAGE}
        if request.method == "POST":
            chosen = request.POST.getlist("submission")
            decision = request.POST.get("decision", "")
            category, message = request.POST.get("category", ""), request.POST.get("message", "")
            if request.POST.get("sync"):
                tasks.queue(tasks.review_cycle, study)
                self.message_user(request, "Sync queued.", messages.SUCCESS)
                return HttpResponseRedirect(request.path)
            if not chosen:
                return self._review_page(request, context, "Tick at least one submission.", status=400)
            if request.POST.get("confirmed") != "yes":
                context.update(confirm=True, chosen=chosen, decision=decision, category=category, message=message)
                return self._review_page(request, context)
            try:
                stored = review.decide(study, chosen, decision, request.user, category=category, message=message)
            except review.DecisionRefused as exc:
                return self._review_page(request, context, str(exc), status=400)
            tasks.queue(tasks.review_cycle, study)
            self.message_user(request, f"{stored} decision(s) stored; Prolific is being told.", messages.SUCCESS)
            return HttpResponseRedirect(request.path)
        return self._review_page(request, context)

    def _review_page(self, request, context, error: str = "", status: int = 200):
        rows = review.review_rows(context["study"])
        context.update(rows=rows, error=error)
        if context.get("confirm"):
            context["chosen_rows"] = [r for r in rows if r["submission"].submission_id in context["chosen"]]
        response = TemplateResponse(request, "prolific/review.html", context, status=status)
        return response if status == 200 else HttpResponseBadRequest(response.render().content)


@admin.register(ProlificAction)
class ProlificActionAdmin(LogAdmin):
    list_display = ("key", "kind", "state", "attempts", "created_at", "done_at", "error")
    list_filter = ("state", "kind")
    readonly_fields = [f.name for f in ProlificAction._meta.fields]

    def get_queryset(self, request):
        actions = super().get_queryset(request)
        return actions if request.user.is_superuser else actions.filter(study__owner=request.user)



@admin.register(ProlificCall)
class ProlificCallAdmin(LogAdmin):
    list_display = ("at", "method", "path", "status", "attempt", "seconds", "action", "error")
    list_filter = ("status", "method")
    readonly_fields = [f.name for f in ProlificCall._meta.fields]

    def get_queryset(self, request):
        calls = super().get_queryset(request).select_related("action")
        if request.user.is_superuser:
            return calls
        return calls.filter(action__study__owner=request.user)

