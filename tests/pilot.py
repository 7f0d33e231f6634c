"""A pilot of every root protocol: a small campaign where three workers each finish what they are given (at most
`hits` HITs of each stage), then the stages it feeds are built and done the same way. Driven through the
annotator API with the valid answers of tests/test_annotator_fuzz_corpus.py."""
from annotation.models import Campaign
from annotation.protocols import all_protocols, get_protocol
from annotation.services import stages
from annotation.services.campaign_import import import_campaign

from .conftest import post_answer
from .test_annotator_fuzz_corpus import OPTIONS, VALID, enter, lines

WORKERS = ("pilot-1", "pilot-2", "pilot-3")


def root_protocols() -> list[str]:
    """Every protocol a campaign is imported with (stages follow by themselves)."""
    return sorted(p.name for p in all_protocols() if not p.stage_only)


def work(campaign, workers=WORKERS, hits: int = 1, items: int | None = None) -> int:
    """Each worker finishes up to `hits` HITs of `campaign` (with `items`, answers only that many items of one HIT
    and leaves it unfinished); how many HITs were finished."""
    finished = 0
    for worker in workers:
        for _ in range(hits):
            client, token = enter(campaign, worker)
            if client is None:
                break
            state = client.get(f"/api/hit/{token}/").json()
            if state.get("done"):
                break
            answered = 0
            while not state.get("done") and (items is None or answered < items):
                item = state["item"]
                response = post_answer(client, token, {"item": item["id"], **VALID[campaign.protocol](item)})
                assert response.status_code == 201, response.content
                state, answered = response.json(), answered + 1
            if not state.get("done"):
                break  # left unfinished: this worker stops here
            finished += 1
    stages.build_stages(campaign)
    return finished


def pilot(protocol: str, workers=WORKERS, hits: int = 1, **options) -> list:
    """Import a small campaign of `protocol` and run the pilot through it and every stage; the campaigns, root
    first."""
    spec = get_protocol(protocol)
    extra = {"redundancy": 3} if spec.family in ("direct-assessment", "pairwise", "ranking", "acceptance",
                                                "error-spans") else {}
    parsed = spec.parse_options({"seed": 3, **OPTIONS[spec.family], **extra, **options})
    root = import_campaign(lines(), name=f"pilot {protocol}", protocol=protocol, parsed=parsed).campaign
    campaigns, todo = [], [root]
    while todo:
        campaign = todo.pop(0)
        campaigns.append(campaign)
        work(campaign, workers, hits)
        todo.extend(Campaign.objects.filter(stage_input=campaign).order_by("pk"))
    return campaigns
