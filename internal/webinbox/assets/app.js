// askperm inbox: live updates and arming. The server counts an allow
// only the arming delay after this script said the request was visible;
// the buttons here only show it.
"use strict";
(function () {
  const body = document.body;
  const page = body.dataset.page;
  if (page === "list") {
    const es = new EventSource("/events");
    es.addEventListener("change", () => location.reload());
    setInterval(() => location.reload(), 15000); // ages and times left
    return;
  }
  if (page !== "request") return;
  const id = body.dataset.id;
  const arm = Number(body.dataset.arm) || 0;
  const allows = Array.from(document.querySelectorAll("[data-allow]"));
  const note = document.getElementById("arming");
  let armedAt = Infinity;
  function disarm() {
    armedAt = Infinity;
    allows.forEach((b) => b.setAttribute("aria-disabled", "true"));
  }
  function beacon() {
    if (document.visibilityState !== "visible") return;
    disarm();
    fetch("/r/" + id + "/visible", {method: "POST", body: new URLSearchParams(new FormData(document.getElementById("visible"))), credentials: "same-origin"})
      .then((r) => {
        if (!r.ok) return;
        armedAt = Date.now() + arm;
        setTimeout(() => { if (Date.now() >= armedAt) allows.forEach((b) => b.removeAttribute("aria-disabled")); }, arm);
      });
  }
  allows.forEach((b) => b.addEventListener("click", (ev) => {
    if (Date.now() < armedAt && note) note.textContent = "Not yet: an allow counts only " + arm + " ms after the question was fully visible; the server refuses it sooner.";
  }));
  document.addEventListener("visibilitychange", () => document.visibilityState === "visible" ? beacon() : disarm());
  const es = new EventSource("/events?r=" + encodeURIComponent(id));
  es.addEventListener("gone", (ev) => {
    es.close();
    disarm();
    const g = document.getElementById("gone");
    g.textContent = "This request is no longer pending: " + ev.data + ".";
    g.hidden = false;
    document.querySelectorAll("#answer button").forEach((b) => b.disabled = true);
  });
  beacon();
})();
