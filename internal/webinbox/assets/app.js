// askperm inbox: live updates, arming and passkeys. The server decides
// everything: it counts an allow only the arming delay after this script
// said the request was visible, and signs it only after a passkey
// assertion it asked for; the script shows and relays.
"use strict";
(function () {
  const body = document.body;
  const page = body.dataset.page;
  const result = document.getElementById("result");
  function say(el, text) { if (el) el.textContent = text; }

  async function postJSON(url, init) {
    const r = await fetch(url, Object.assign({method: "POST", credentials: "same-origin"}, init));
    let v = {};
    try { v = await r.json(); } catch (e) { v = {text: "the server's answer: HTTP " + r.status}; }
    return {ok: r.ok, v: v};
  }
  async function create(url) {
    const b = await postJSON(url + "/begin");
    if (!b.ok) throw new Error(b.v.text);
    const cred = await navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(b.v.publicKey)});
    return postJSON(url + "/finish", {headers: {"Content-Type": "application/json"}, body: JSON.stringify(cred.toJSON())});
  }
  async function get(url, fields) {
    const b = await postJSON(url + "/begin", fields ? {body: fields} : {});
    if (!b.ok) throw new Error(b.v.text);
    const cred = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(b.v.publicKey)});
    const json = JSON.stringify(cred.toJSON());
    if (!fields) return postJSON(url + "/finish", {headers: {"Content-Type": "application/json"}, body: json});
    const f = new URLSearchParams();
    ["csrf", "id", "digest"].forEach((k) => f.set(k, fields.get(k)));
    f.set("credential", json);
    return postJSON(url + "/finish", {body: f});
  }
  function ceremony(button, run) {
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        const r = await run();
        say(result, r.v.text);
        if (r.ok) { location.assign("/"); return; }
      } catch (e) {
        say(result, "Not done: " + e.message);
      }
      button.disabled = false;
    });
  }
  if (page === "pair") {
    ceremony(document.getElementById("register"), () => create("/pair/" + body.dataset.token));
    return;
  }
  if (page === "login") {
    ceremony(document.getElementById("login"), () => get("/login"));
    return;
  }
  if (page === "list") {
    const es = new EventSource("/events");
    es.addEventListener("change", () => location.reload());
    setInterval(() => location.reload(), 15000); // ages and times left
    return;
  }
  if (page !== "request") return;
  const id = body.dataset.id;
  const arm = Number(body.dataset.arm) || 0;
  const form = document.getElementById("answer");
  const allows = Array.from(document.querySelectorAll("[data-allow]"));
  const note = document.getElementById("arming");
  function disarm() { allows.forEach((b) => b.setAttribute("aria-disabled", "true")); }
  function beacon() {
    if (document.visibilityState !== "visible") return;
    disarm();
    fetch("/r/" + id + "/visible", {method: "POST", body: new URLSearchParams(new FormData(document.getElementById("visible"))), credentials: "same-origin"})
      .then((r) => { if (r.ok) setTimeout(() => allows.forEach((b) => b.removeAttribute("aria-disabled")), arm); });
  }
  // An allow is confirmed with the passkey; a deny, Back and the
  // always-choices' way to stage rule are plain posts.
  form.addEventListener("submit", async (ev) => {
    const b = ev.submitter;
    if (!b || !b.hasAttribute("data-allow") || (b.name === "choice" && b.value.endsWith("-always"))) return;
    ev.preventDefault();
    if (b.getAttribute("aria-disabled") === "true") { // askperm refuses it too
      say(note, "not yet counted: an allow counts only " + arm + " ms after the question was fully visible; read it, then tap again");
      return;
    }
    const fields = new URLSearchParams(new FormData(form, b));
    say(note, "");
    try {
      const r = await get("/r/" + id + "/allow", fields);
      say(result, r.v.text);
      if (r.ok) form.querySelectorAll("button").forEach((x) => x.disabled = true);
    } catch (e) {
      say(note, e.message);
    }
  });
  function hidden() {
    disarm();
    navigator.sendBeacon("/r/" + id + "/hidden", new URLSearchParams(new FormData(document.getElementById("visible"))));
  }
  document.addEventListener("visibilitychange", () => document.visibilityState === "visible" ? beacon() : hidden());
  const es = new EventSource("/events?r=" + encodeURIComponent(id));
  es.addEventListener("gone", (ev) => {
    es.close();
    disarm();
    const g = document.getElementById("gone");
    g.textContent = "This request is no longer pending: " + ev.data + ".";
    g.hidden = false;
    form.querySelectorAll("button").forEach((x) => x.disabled = true);
  });
  beacon();
})();
