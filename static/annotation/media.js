/* Media beside the source, on every screen (templates/annotation/_media.html marks where; docs/api.md, "Media on
   the screen"). hit.js hands each item to HitMedia.show before the protocol's screen sees it, adds
   HitMedia.answer() to the answer it posts, and asks HitMedia.held() before posting.

   - Images: a thumbnail button that opens the image larger in a modal <dialog> (Esc or the close button shuts it,
     the focus goes back to the thumbnail), with its alt text; a caption below when given.
   - Video and audio: the browser's own player (<video controls>, <audio controls>), a WebVTT `captions` URL as a
     <track>, the caption text (subtitles) below.
   - Actions: play, pause, seek and ended per video/audio, as {media, event, t (media seconds), at (seconds since
     the item was shown)}, at most MAX_ACTIONS; seconds played per element from its `played` ranges (media time
     actually played, so a seek skips nothing into it), sent as media_seconds [{media, played, duration}].
   - The campaign's require_media_played (a percentage, the page's config) holds the screen's Submit disabled
     until every video/audio has played that share, and says why under the players. */
(function () {
  "use strict";
  var MAX_ACTIONS = 500;         // the server refuses more (annotation/building/media_actions.py)
  var TOLERANCE_SECONDS = 0.5;   // the same slack as the server's: the last frames of a clip need not be counted
  var config = JSON.parse(document.getElementById("hit-config").textContent);
  var required = Number(config.require_media_played) || 0;
  var players = [];   // per video/audio shown: {index, el, kind}
  var actions = [];
  var shownAt = 0;
  var lightbox = null;
  var returnFocus = null;
  var button = document.getElementById("submit");
  var wished = button ? button.disabled : false;

  function element(tag, className, text) {
    var el = document.createElement(tag);
    if (className) { el.className = className; }
    if (text !== undefined && text !== null) { el.textContent = text; }
    return el;
  }

  /* The screen's Submit: what the screen sets is what it wants; while a clip still has to be played the button
     stays disabled whatever the screen wants, and reads as disabled to the screen's own checks. */
  if (button) {
    var native = Object.getOwnPropertyDescriptor(HTMLButtonElement.prototype, "disabled");
    Object.defineProperty(button, "disabled", {
      configurable: true,
      get: function () { return native.get.call(button); },
      set: function (value) { wished = !!value; native.set.call(button, wished || held()); }
    });
  }

  function refreshButton() {
    if (button) { button.disabled = wished; }
  }

  function played(el) {
    var total = 0;
    for (var k = 0; k < el.played.length; k += 1) { total += el.played.end(k) - el.played.start(k); }
    return total;
  }

  function duration(el) {
    return isFinite(el.duration) && el.duration > 0 ? el.duration : null;
  }

  /* Players still short of the required share (all of them while their length is unknown). */
  function shortOf() {
    if (required <= 0) { return []; }
    return players.filter(function (p) {
      var length = duration(p.el);
      return length === null || played(p.el) + TOLERANCE_SECONDS < length * required / 100;
    });
  }

  function held() {
    return shortOf().length > 0;
  }

  function share(p) {
    var length = duration(p.el);
    return length === null ? 0 : Math.min(100, Math.round(100 * played(p.el) / length));
  }

  function updateHold() {
    var note = document.querySelector("[data-media-hold]");
    var missing = shortOf();
    if (note) {
      note.hidden = missing.length === 0;
      note.textContent = missing.length === 0 ? "" : "Submit is available once you have played " +
        (players.length === 1 ? "the " + players[0].kind : "each video and audio clip") + " to at least " +
        required + " % (played so far: " + missing.map(function (p) {
          return (players.length === 1 ? "" : p.label + ": ") + share(p) + " %";
        }).join(", ") + ").";
    }
    refreshButton();
  }

  function record(p, event) {
    if (actions.length >= MAX_ACTIONS) { return; }
    actions.push({media: p.index, event: event, t: Math.round(p.el.currentTime * 100) / 100,
                  at: Math.round((performance.now() - shownAt) / 10) / 100});
  }

  function openLightbox(media, opener) {
    if (!lightbox) {
      lightbox = element("dialog", "media-lightbox");
      lightbox.setAttribute("aria-label", "Enlarged image");
      var close = lightbox.appendChild(element("button", "media-close", "Close"));
      close.type = "button";
      close.addEventListener("click", function () { lightbox.close(); });
      lightbox.appendChild(element("img", "media-large"));
      lightbox.appendChild(element("p", "media-large-caption"));
      lightbox.addEventListener("click", function (event) { if (event.target === lightbox) { lightbox.close(); } });
      lightbox.addEventListener("close", function () {
        if (returnFocus) { returnFocus.focus(); }
        returnFocus = null;
      });
      document.body.appendChild(lightbox);
    }
    var img = lightbox.querySelector(".media-large");
    img.src = media.url;
    img.alt = media.alt || "";
    var caption = lightbox.querySelector(".media-large-caption");
    caption.textContent = media.caption || media.alt || "";
    returnFocus = opener;
    lightbox.showModal();
    lightbox.querySelector(".media-close").focus();
  }

  function figure(media, index, counts) {
    var fig = element("figure", "media-item media-" + media.kind);
    if (media.kind === "image") {
      var zoom = fig.appendChild(element("button", "media-zoom"));
      zoom.type = "button";
      zoom.setAttribute("aria-label", "Enlarge image" + (media.alt ? ": " + media.alt : ""));
      var img = zoom.appendChild(element("img"));
      img.src = media.url;
      img.alt = media.alt || "";
      img.loading = "lazy";
      zoom.addEventListener("click", function () { openLightbox(media, zoom); });
    } else {
      counts[media.kind] = (counts[media.kind] || 0) + 1;
      var el = fig.appendChild(element(media.kind));
      el.controls = true;
      el.preload = "metadata";
      el.src = media.url;
      if (media.alt) { el.setAttribute("aria-label", media.alt); }
      if (media.captions) {
        var track = el.appendChild(element("track"));
        track.kind = "captions";
        track.src = media.captions;
        track.default = true;
        track.label = "Captions";
      }
      var p = {index: index, el: el, kind: media.kind, label: media.kind + " " + counts[media.kind]};
      players.push(p);
      el.addEventListener("play", function () { record(p, "play"); });
      el.addEventListener("pause", function () { if (!el.ended) { record(p, "pause"); } });
      el.addEventListener("seeked", function () { record(p, "seek"); });
      el.addEventListener("ended", function () { record(p, "ended"); updateHold(); });
      ["timeupdate", "loadedmetadata", "durationchange"].forEach(function (name) {
        el.addEventListener(name, updateHold);
      });
    }
    if (media.caption) { fig.appendChild(element("figcaption", "media-caption", media.caption)); }
    return fig;
  }

  /* What an item shows beside its source: `media`, the document's own media then its segment's (docs/api.md
     §8.2); the indices of media_actions and media_seconds count in this list. */
  function mediaOf(item) {
    return item && Array.isArray(item.media) ? item.media : [];
  }

  function show(item) {
    players.forEach(function (p) { p.el.pause(); p.el.removeAttribute("src"); p.el.load(); });
    players = [];
    actions = [];
    shownAt = performance.now();
    if (lightbox && lightbox.open) { lightbox.close(); }
    var list = mediaOf(item);
    var counts = {};
    Array.prototype.forEach.call(document.querySelectorAll("[data-media]"), function (box, n) {
      box.textContent = "";
      box.hidden = n > 0 || list.length === 0;  // one box per screen; a second one stays empty
      if (box.hidden) { return; }
      var row = box.appendChild(element("div", "media-row"));
      list.forEach(function (media, index) {
        if (media && typeof media.url === "string" && /^(image|video|audio)$/.test(media.kind)) {
          row.appendChild(figure(media, index, counts));
        }
      });
      var note = box.appendChild(element("p", "media-hold"));
      note.setAttribute("data-media-hold", "");
      note.dir = "ltr";  // the page's own (English) words, whatever the source's direction
      note.setAttribute("aria-live", "polite");
      note.hidden = true;
    });
    updateHold();
  }

  /* What the answer carries about the media: nothing when the item has no video or audio. */
  function answer() {
    if (!players.length) { return {}; }
    return {
      media_actions: actions.slice(),
      media_seconds: players.map(function (p) {
        var length = duration(p.el);
        return {media: p.index, played: Math.round(played(p.el) * 100) / 100,
                duration: length === null ? null : Math.round(length * 100) / 100};
      })
    };
  }

  window.HitMedia = {
    show: show,
    answer: answer,
    held: held,
    reason: function () {
      var note = document.querySelector("[data-media-hold]");
      return note ? note.textContent : "";
    }
  };
})();
