/* The HIT controller: fetches the current state, hands the item to the protocol's screen,
   posts answers, and shows progress and the completion code (then goes on to the campaign's
   completion URL, if it has one). A paused campaign (423) or a closed one (410 with "closed")
   hides the item and says so; the HIT stays the worker's. The page loads exactly one screen, the scripts its
   protocol declares (annotation.protocols.base.Screen), after media.js (the item's media, their actions and
   require_media_played, sent with each answer); it registers with HitScreens.register({show(item),
   focus(), unlock()?}) and calls HitScreens.submit(answer); a screen of several items (a state's `page`, handed to
   show as its second argument) calls HitScreens.submitBatch(answers), one POST of {"batch": [...]}. An answer whose POST
   fails with a 5xx or a network error is sent once more by itself after a short pause: a replay of the item just
   saved is answered as before and stored once (docs/api.md, "Annotators"), so the judge never resubmits.
   A loud tutorial's wrong answer comes back as 200 with `feedback` (docs/api.md §8, training): the item stays on
   screen with the judge's marks, and feedback.js shows what was missed; the screen is unlocked for a retry. */
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("hit-config").textContent);
  var screen = null;  // the one screen on the page (HitScreens.register)
  var current = null;
  var busy = false;
  var screenEl = document.getElementById("screen");
  var doneEl = document.getElementById("done");
  var haltedEl = document.getElementById("halted");
  var statusEl = document.getElementById("status");
  var halted = false;
  var redirectTimer = null;
  var RETRY_DELAY_MS = config.retry_delay_ms || 1500;  // long enough for a restarting database to come back

  function setStatus(text, isError) {
    statusEl.textContent = text || "";
    statusEl.classList.toggle("error", !!isError);
  }

  function setProgress(position, total) {
    document.getElementById("progress-text").textContent = position + " / " + total;
    document.getElementById("progress-fill").style.width = (100 * (position - 1) / total) + "%";
  }

  var instructionsEl = document.getElementById("instructions");
  var instructionsOpen = false;

  function openInstructions(open) {
    if (!instructionsEl || halted) { return; }
    instructionsOpen = open;
    instructionsEl.hidden = !open;
    if (current && !current.done) { screenEl.hidden = open; }
    if (open) { document.getElementById("begin").focus(); } else if (current && !current.done) {
      screen.focus();
    }
  }

  function showDone(state) {
    screenEl.hidden = true;
    doneEl.hidden = false;
    document.getElementById("completion-code").textContent = state.completion_code;
    var note = document.getElementById("closed-note");
    note.hidden = !state.closed;
    note.textContent = state.closed ? state.detail : "";
    setProgress(state.total + 1, state.total);
    document.getElementById("progress-text").textContent = state.total + " / " + state.total;
    var url = state.completion_url;
    if (url && /^https?:\/\//i.test(url)) {
      document.getElementById("completion-link").href = url;
      document.getElementById("completion-next").hidden = false;
      if (redirectTimer === null) {  // the code stays on screen a moment first; the link is the fallback
        redirectTimer = window.setTimeout(function () { window.location.assign(url); },
                                          config.completion_redirect_ms || 0);
      }
    }
  }

  function showHalted(data) {
    halted = true;
    screenEl.hidden = true;
    doneEl.hidden = true;
    if (instructionsEl) { instructionsOpen = false; instructionsEl.hidden = true; }
    haltedEl.hidden = false;
    document.getElementById("halted-title").textContent = data.title || (data.closed ? "Campaign closed" : "Paused");
    document.getElementById("halted-text").textContent = data.detail || data.error;
    document.getElementById("check-again").hidden = !!data.closed;
    if (data.position && data.total) { setProgress(data.position, data.total); }
    setStatus("");
  }

  function show(state) {
    var first = current === null;
    current = state;
    halted = false;
    haltedEl.hidden = true;
    if (state.done) {
      showDone(state);
      return;
    }
    setProgress(state.position, state.total);
    if (window.HitMedia) { window.HitMedia.show(state.item); }  // media.js: before the screen, which may enable Submit
    screen.show(state.item, state.page);
    if (window.HitInstructions) { window.HitInstructions.show(state.item); }
    if (window.HitPractice) { window.HitPractice.show(state.item); }  // practice.js: a tutorial item's note
    if (first && state.position === 1 && instructionsEl) {
      openInstructions(true);  // instructions come before the first item
      return;
    }
    screenEl.hidden = instructionsOpen;
    if (!instructionsOpen) { screen.focus(); }
  }

  function call(method, body) {
    var options = {method: method, headers: {"Accept": "application/json"}, credentials: "omit", cache: "no-store"};
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    return fetch(config.api, options).then(function (response) {
      // A proxy's or Django's error page is not JSON: keep the status, with an empty body.
      return response.json().then(function (data) { return {status: response.status, data: data || {}}; },
                                  function () { return {status: response.status, data: {}}; });
    });
  }

  function feedback(shown) {
    if (window.HitFeedback) { window.HitFeedback.show(shown, current && current.item); }
  }

  function handle(result) {
    var training = result.data.training;
    if (result.status === 200 && result.data.feedback) {  // a loud tutorial's wrong try: the item stays
      setStatus("");
      feedback(result.data.feedback);
      unlock();
    } else if (training && training.stopped) {
      feedback(null);
      showHalted({title: "Training not passed", detail: training.message, closed: true});
    } else if (result.status === 410 && result.data.blocked) {
      showHalted({title: "Thank you", detail: result.data.error, closed: true});
    } else if (result.status === 200 || result.status === 201) {
      feedback(null);
      setStatus(training && training.passed ? training.message : "");
      show(result.data);
    } else if (result.status === 409 && result.data.state) {
      setStatus("");
      show(result.data.state);
    } else if (result.data.paused || result.data.closed) {
      showHalted(result.data);
    } else {
      setStatus(result.data.error || "Something went wrong.", true);
      if (result.status === 410) { screenEl.hidden = true; } else { unlock(); }
    }
  }

  function unlock() {
    if (screen && screen.unlock) { screen.unlock(); }
  }

  /* Whether an answer may be sent now; says why not (and unlocks the screen) when a clip is still to play. */
  function ready() {
    if (busy || halted || instructionsOpen || !current || current.done) { return false; }
    if (window.HitMedia && window.HitMedia.held()) {  // a clip still to play (require_media_played)
      setStatus(window.HitMedia.reason(), true);
      unlock();
      return false;
    }
    return true;
  }

  function submit(answer) {
    if (!ready()) { return; }
    // the instruction judgment (item_instructions.js), asked beside any screen's own answer
    var extra = window.HitInstructions ? window.HitInstructions.answer() : {fields: {}};
    if (extra.error) {
      setStatus(extra.error, true);
      unlock();
      return;
    }
    busy = true;
    setStatus("Saving…");
    var body = Object.assign({item: current.item.id}, answer, extra.fields,
                             window.HitMedia ? window.HitMedia.answer() : {});
    post(body, 1).then(function () { busy = false; });
  }

  /* A page's answers ({item, …} each, in the page's order) in one POST, {"batch": [...]} (docs/api.md §8.3), retried
     like a single answer: a replayed batch is answered as before and stored once. The media report goes with the
     first answer, as with a single one. */
  function submitBatch(answers) {
    if (!ready()) { return; }
    busy = true;
    setStatus("Saving…");
    var media = window.HitMedia ? window.HitMedia.answer() : {};
    var batch = answers.map(function (answer, k) { return k === 0 ? Object.assign({}, answer, media) : answer; });
    post({batch: batch}, 1).then(function () { busy = false; });
  }

  /* POST the answer; on a 5xx or a network error, wait RETRY_DELAY_MS and send the same body again (`retries`
     times). Only then does the judge see the failure. */
  function post(body, retries) {
    function again(failed) {
      if (retries <= 0) { return failed(); }
      setStatus("Saving… (trying again)");
      return new Promise(function (resolve) { window.setTimeout(resolve, RETRY_DELAY_MS); })
        .then(function () { return post(body, retries - 1); });
    }
    return call("POST", body).then(function (result) {
      if (result.status >= 500) {
        return again(function () {
          setStatus("The server could not save your answer. It was not lost: press Submit again.", true);
          unlock();
        });
      }
      handle(result);
    }, function () {
      return again(function () {
        setStatus("Could not reach the server. Your answer was not lost: press Submit again.", true);
        unlock();
      });
    });
  }

  /* Helpers the screens share: an English language name for a code, an element with a class and text,
     and a text with a highlighted span (see fillText). */
  function languageName(code) {
    if (!code) { return ""; }
    try {
      var name = new Intl.DisplayNames(["en"], {type: "language"}).of(code);
      return name || code;
    } catch (error) {
      return code;
    }
  }

  function element(tag, className, text) {
    var el = document.createElement(tag);
    if (className) { el.className = className; }
    if (text !== undefined) { el.textContent = text; }
    return el;
  }

  /* The text into `el`, with the code points [span[0], span[1]) in a <mark> when the span fits the text
     (a missing or unusable span shows the plain text). Text nodes only, never HTML. */
  function fillText(el, text, span) {
    el.textContent = "";
    var chars = Array.from(text);  // one entry per code point: an emoji is one, not two
    if (!Array.isArray(span) || span.length !== 2 || !(span[0] >= 0 && span[0] < span[1] &&
                                                       span[1] <= chars.length)) {
      el.textContent = text;
      return;
    }
    el.appendChild(document.createTextNode(chars.slice(0, span[0]).join("")));
    el.appendChild(element("span", "visually-hidden", "highlighted: "));
    el.appendChild(element("mark", "hl", chars.slice(span[0], span[1]).join("")));
    el.appendChild(element("span", "visually-hidden", " (end of highlight)"));
    el.appendChild(document.createTextNode(chars.slice(span[1]).join("")));
  }

  window.HitScreens = {
    languageName: languageName,
    element: element,
    fillText: fillText,
    register: function (shown) { screen = shown; },
    submit: submit,
    submitBatch: submitBatch,
    isBusy: function () { return busy; },
    isPaused: function () { return instructionsOpen || halted; },
    /* The screen's own account of its first unfinished part ({el, message}), or null (submit_why.js). */
    unfinished: function () { return screen && screen.unfinished ? screen.unfinished() : null; }
  };

  function load() {
    call("GET").then(handle, function () { setStatus("Could not reach the server. Reload the page.", true); });
  }

  document.getElementById("check-again").addEventListener("click", load);

  if (instructionsEl) {
    document.getElementById("begin").addEventListener("click", function () { openInstructions(false); });
    document.getElementById("show-instructions").addEventListener("click", function () {
      openInstructions(!instructionsOpen);
    });
  }

  document.addEventListener("DOMContentLoaded", load);
})();
