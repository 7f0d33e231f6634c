"""A local stand-in for Prolific's REST API (docs/api.md "Prolific"), for the tests: a threaded http.server that
answers the documented request and response bodies, keeps its state, validates what it is sent, and can be told to
fail: 401 for a wrong token, 429 with Retry-After, 500 (before or after doing the work) and hangs.

Only the endpoints the platform uses are served; anything else is a 404 in Prolific's error shape."""
from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PREFIX = "/api/v1/"
#: The researcher's API token the fake accepts by default.
TOKEN = "tok-research-1"
REJECTION_CATEGORIES = {"TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
                        "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER"}
CODE_TYPES = {"COMPLETED", "FAILED_ATTENTION_CHECK", "FOLLOW_UP_STUDY", "GIFT_CARD", "INCOMPATIBLE_DEVICE",
              "NO_CONSENT", "OTHER"}
CODE_ACTIONS = {"MANUALLY_REVIEW", "AUTOMATICALLY_APPROVE", "ADD_TO_PARTICIPANT_GROUP",
                "REMOVE_FROM_PARTICIPANT_GROUP", "REQUEST_RETURN"}
DEVICES = {"desktop", "tablet", "mobile"}
STUDY_REQUIRED = ("name", "description", "external_study_url", "prolific_id_option", "completion_codes",
                  "total_available_places", "estimated_completion_time", "reward")


class Refused(Exception):
    def __init__(self, status: int, title: str, detail):
        self.status, self.title, self.detail = status, title, detail


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class FakeProlific:
    """The server's state, its faults and what it did. `url` is the API's base (PROLIFIC_API_BASE_URL)."""

    def __init__(self, token: str = TOKEN):
        self.token = token
        self.studies: dict[str, dict] = {}
        self.submissions: dict[str, dict] = {}
        self.bonuses: dict[str, dict] = {}
        self.groups: dict[str, dict] = {}
        self.requests: list[tuple[str, str, dict | None]] = []  # every request received, faults included
        self.done: Counter = Counter()  # (kind, subject) -> times the work was done
        self.faults: list[dict] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{PREFIX}"

    def start(self) -> FakeProlific:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # faults -----------------------------------------------------------------------------------------------------
    def fail(self, method: str, pattern: str, status: int, *, times: int = 1, after: bool = False,
             retry_after: int | None = None, hang: float = 0.0) -> None:
        """The next `times` requests of `method` on a path matching `pattern` (a regex on the path after /api/v1/)
        answer `status` (0 with `hang`: no answer for that many seconds). `after`: do the work first, then fail,
        as a server that loses its answer does."""
        self.faults.append({"method": method, "pattern": re.compile(pattern), "status": status, "times": times,
                            "after": after, "retry_after": retry_after, "hang": hang})

    def _fault(self, method: str, path: str) -> dict | None:
        with self.lock:
            for fault in self.faults:
                if fault["method"] == method and fault["pattern"].search(path) and fault["times"] > 0:
                    fault["times"] -= 1
                    return fault
        return None

    # what participants do (the tests call these as Prolific's side of a simulated worker) ----------------------
    def start_submission(self, study_id: str, participant_id: str) -> dict:
        submission = {"id": uuid.uuid4().hex[:24], "participant_id": participant_id, "study_id": study_id,
                      "status": "ACTIVE", "started_at": _now(), "completed_at": None, "study_code": "",
                      "bonus_payments": [], "return_requested": None}
        self.submissions[submission["id"]] = submission
        return submission

    def submit_code(self, submission_id: str, code: str) -> None:
        """The participant enters `code` on Prolific: its actions are carried out."""
        submission = self.submissions[submission_id]
        study = self.studies[submission["study_id"]]
        submission.update(study_code=code, completed_at=_now(), status="AWAITING REVIEW")
        for entry in study["completion_codes"]:
            if entry["code"] == code:
                for action in entry["actions"]:
                    if action["action"] == "ADD_TO_PARTICIPANT_GROUP":
                        self.groups[action["participant_group"]]["members"].add(submission["participant_id"])
                    if action["action"] == "REQUEST_RETURN":
                        submission["return_requested"] = action.get("return_reason", "")

    def set_status(self, submission_id: str, status: str) -> None:
        self.submissions[submission_id]["status"] = status

    # the API ----------------------------------------------------------------------------------------------------
    def handle(self, method: str, path: str, body: dict | None) -> tuple[int, dict]:
        routes = [
            ("GET", r"^studies/$", self.list_studies), ("POST", r"^studies/$", self.create_study),
            ("POST", r"^studies/(?P<id>\w+)/transition/$", self.transition_study),
            ("GET", r"^studies/(?P<id>\w+)/submissions/$", self.list_submissions),
            ("POST", r"^submissions/bulk-approve/$", self.bulk_approve),
            ("POST", r"^submissions/bonus-payments/$", self.set_up_bonuses),
            ("POST", r"^submissions/(?P<id>\w+)/transition/$", self.transition_submission),
            ("POST", r"^bulk-bonus-payments/(?P<id>\w+)/pay/$", self.pay_bonuses),
            ("GET", r"^participant-groups/$", self.list_groups),
            ("POST", r"^participant-groups/$", self.create_group),
            ("POST", r"^participant-groups/(?P<id>\w+)/participants/$", self.add_to_group),
        ]
        for verb, pattern, view in routes:
            match = re.match(pattern, path)
            if verb == method and match:
                with self.lock:
                    return view(body or {}, **match.groupdict())
        raise Refused(404, "Not found", f"No route for {method} /api/v1/{path}")

    def list_studies(self, body):
        return 200, {"results": [{k: s[k] for k in ("id", "name", "internal_name", "status")}
                                 for s in self.studies.values()]}

    def create_study(self, body):
        missing = [f for f in STUDY_REQUIRED if f not in body]
        if missing:
            raise Refused(400, "Bad request", {f: ["This field is required."] for f in missing})
        if not isinstance(body["reward"], int) or body["reward"] <= 0:
            raise Refused(400, "Bad request", {"reward": ["A positive integer in pence/cents."]})
        if "{{%PROLIFIC_PID%}}" not in body["external_study_url"]:
            raise Refused(400, "Bad request", {"external_study_url": ["Must carry {{%PROLIFIC_PID%}}."]})
        for entry in body["completion_codes"]:
            if entry.get("code_type") not in CODE_TYPES or not entry.get("code") or \
                    any(a.get("action") not in CODE_ACTIONS for a in entry.get("actions", [])):
                raise Refused(400, "Bad request", {"completion_codes": [f"Invalid entry {entry}."]})
        if not set(body.get("device_compatibility", [])) <= DEVICES:
            raise Refused(400, "Bad request", {"device_compatibility": ["Unknown device."]})
        for f in body.get("filters", []):
            if f.get("filter_id") == "participant_group_blocklist" and \
                    any(g not in self.groups for g in f.get("selected_values", [])):
                raise Refused(400, "Bad request", {"filters": ["Unknown participant group."]})
        study = {**body, "id": uuid.uuid4().hex[:24], "status": "UNPUBLISHED", "date_created": _now()}
        self.studies[study["id"]] = study
        self.done["create-study", body.get("internal_name")] += 1
        return 201, study

    def transition_study(self, body, id):
        study = self.studies.get(id)
        if study is None:
            raise Refused(404, "Not found", "No such study.")
        if body.get("action") != "PUBLISH":
            raise Refused(400, "Bad request", {"action": ["Unsupported action."]})
        if study["status"] == "UNPUBLISHED":
            study["status"] = "ACTIVE"
            self.done["publish", id] += 1
        return 200, {"id": id, "status": study["status"]}

    def list_submissions(self, body, id):
        if id not in self.studies:
            raise Refused(404, "Not found", "No such study.")
        rows = [s for s in self.submissions.values() if s["study_id"] == id]
        return 200, {"results": rows, "meta": {"count": len(rows)}, "_links": {"next": {"href": None}}}

    def _approve(self, submission):
        if submission["status"] == "APPROVED":
            return
        if submission["status"] != "AWAITING REVIEW":
            raise Refused(400, "Bad request", f"Submission {submission['id']} is {submission['status']}.")
        submission["status"] = "APPROVED"
        self.done["approve", submission["id"]] += 1

    def transition_submission(self, body, id):
        submission = self.submissions.get(id)
        if submission is None:
            raise Refused(404, "Not found", "No such submission.")
        action = body.get("action")
        if action == "APPROVE":
            self._approve(submission)
        elif action == "REJECT":
            if len(body.get("message") or "") < 100:
                raise Refused(400, "Bad request", {"message": ["At least 100 characters when rejecting."]})
            if body.get("rejection_category") not in REJECTION_CATEGORIES:
                raise Refused(400, "Bad request", {"rejection_category": ["Required when rejecting."]})
            if submission["status"] != "REJECTED":
                if submission["status"] != "AWAITING REVIEW":
                    raise Refused(400, "Bad request", f"Submission {id} is {submission['status']}.")
                submission["status"] = "REJECTED"
                self.done["reject", id] += 1
        else:
            raise Refused(400, "Bad request", {"action": ["APPROVE or REJECT."]})
        return 200, {"id": id, "status": submission["status"]}

    def bulk_approve(self, body):
        ids = body.get("submission_ids")
        if not body.get("study_id") or not isinstance(ids, list) or not ids:
            raise Refused(400, "Bad request", {"submission_ids": ["A non-empty list, with study_id."]})
        for sid in ids:
            submission = self.submissions.get(sid)
            if submission is None or submission["study_id"] != body["study_id"]:
                raise Refused(400, "Bad request", f"Submission {sid} is not in the study.")
        for sid in ids:
            self._approve(self.submissions[sid])
        return 200, {}

    def set_up_bonuses(self, body):
        study = self.studies.get(body.get("study_id"))
        if study is None:
            raise Refused(400, "Bad request", {"study_id": ["Unknown study."]})
        rows, amount = [], 0
        for n, line in enumerate((body.get("csv_bonuses") or "").strip().splitlines(), start=1):
            parts = line.split(",")
            if len(parts) != 2 or not re.match(r"^\d+(\.\d{1,2})?$", parts[1].strip()):
                raise Refused(400, "Bad request", {"csv_bonuses": [f"Line {n}: participant id,amount."]})
            rows.append((parts[0].strip(), round(float(parts[1]) * 100)))
            amount += rows[-1][1]
        if not rows:
            raise Refused(400, "Bad request", {"csv_bonuses": ["No bonuses."]})
        bonus = {"id": uuid.uuid4().hex[:24], "study": study["id"], "amount": amount, "fees": round(amount / 3),
                 "total_amount": amount + round(amount / 3), "rows": rows, "paid": False}
        self.bonuses[bonus["id"]] = bonus
        return 201, {k: bonus[k] for k in ("id", "study", "amount", "fees", "total_amount")}

    def pay_bonuses(self, body, id):
        bonus = self.bonuses.get(id)
        if bonus is None:
            raise Refused(404, "Not found", "No such bulk bonus payment.")
        if bonus["paid"]:
            raise Refused(400, "Bad request", "This bulk bonus payment has already been paid.")
        bonus["paid"] = True
        for participant, cents in bonus["rows"]:
            for s in self.submissions.values():
                if s["participant_id"] == participant and s["study_id"] == bonus["study"]:
                    s["bonus_payments"].append(cents)
            self.done["bonus", participant] += 1
        return 202, {}

    def list_groups(self, body):
        return 200, {"results": [{"id": g["id"], "name": g["name"], "participant_count": len(g["members"])}
                                 for g in self.groups.values()]}

    def create_group(self, body):
        if not body.get("name"):
            raise Refused(400, "Bad request", {"name": ["This field is required."]})
        group = {"id": uuid.uuid4().hex[:24], "name": body["name"], "members": set()}
        self.groups[group["id"]] = group
        self.done["create-group", body["name"]] += 1
        return 201, {"id": group["id"], "name": group["name"], "participant_count": 0}

    def add_to_group(self, body, id):
        group = self.groups.get(id)
        if group is None:
            raise Refused(404, "Not found", "No such participant group.")
        ids = body.get("participant_ids")
        if not isinstance(ids, list) or not ids:
            raise Refused(400, "Bad request", {"participant_ids": ["A non-empty list."]})
        group["members"].update(ids)
        return 200, {"results": [{"participant_id": p} for p in sorted(group["members"])]}

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _serve(self, method):
                path = self.path.split("?")[0]
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    return self._send(400, {"error": {"status": 400, "title": "Bad request", "detail": "Not JSON."}})
                fake.requests.append((method, path[len(PREFIX):], body))
                if self.headers.get("Authorization") != f"Token {fake.token}":
                    return self._send(401, {"error": {"status": 401, "error_code": 140100, "title": "Unauthorised",
                                                      "detail": "Invalid token."}})
                if not path.startswith(PREFIX):
                    return self._send(404, {"error": {"status": 404, "title": "Not found", "detail": path}})
                fault = fake._fault(method, path[len(PREFIX):])
                if fault and fault["hang"]:
                    time.sleep(fault["hang"])
                    return None  # the client has given up; no answer
                if fault and not fault["after"]:
                    return self._fail(fault)
                try:
                    status, answer = fake.handle(method, path[len(PREFIX):], body)
                except Refused as exc:
                    return self._send(exc.status, {"error": {"status": exc.status, "title": exc.title,
                                                             "detail": exc.detail}})
                if fault:  # the work was done; the answer is lost
                    return self._fail(fault)
                return self._send(status, answer)

            def _fail(self, fault):
                headers = {"Retry-After": str(fault["retry_after"])} if fault["retry_after"] is not None else {}
                title = "Too many requests" if fault["status"] == 429 else "Internal server error"
                return self._send(fault["status"], {"error": {"status": fault["status"], "title": title}}, headers)

            def _send(self, status, answer, headers=None):
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._serve("GET")

            def do_POST(self):
                self._serve("POST")

        return Handler
