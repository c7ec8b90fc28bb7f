/* laya playground: edit a state and questions, ask POST /v1/systemone, draw the answers.
 *
 * No framework and no build step. One source of truth for the questions (app.questions, a list
 * of plain objects); the form and the JSON tab are both drawn from it and both write to it.
 */
"use strict";

const TYPES = ["choice", "score", "noul"];
const KEY_STORE = "laya.apiKey";
const API_TIMEOUT_MS = 120000;
const META_TIMEOUT_MS = 15000;
const FIELD_ERRORS = {
  state: "state-error",
  questions: "questions-error",
  model: "model-error",
  lang: "lang-error",
  lang_guess: "lang-error",
  min_confidence: "min_confidence-error",
  max_len: "max_len-error",
  tournament: "tournament-error",
  shortlist: "shortlist-error",
};

/* The inputs under Options: [input id, request field, label, placeholder, inputmode]. */
const OPTION_INPUTS = [
  ["lang", "lang", "Language (lang)", "auto", null],
  ["min-confidence", "min_confidence", "Min confidence", "off", "decimal"],
  ["max-len", "max_len", "Max tokens (max_len)", "default", "numeric"],
  ["tournament", "tournament", "Tournament (group)", "off", null],
  ["shortlist", "shortlist", "Shortlist (k)", "off", "numeric"],
];

/* One line per number on a card, shown on hover (and listed in docs/playground.md). */
const EXPLAIN = {
  probability: "The probability the model gives this option; a card's options add up to 100%.",
  confidence:
    "How sure the answer is: 1 minus the normalised entropy of the probabilities (1 = all on one option, 0 = spread evenly); for a yes/no question, the larger of p and 1 - p.",
  answer_confidence: "The probability of the chosen answer; min_confidence gates on it.",
  jev: "Jev's own confidence formula on the same probabilities, for thresholds tuned on Jev.",
  score: "The expected level: each level times its probability, added up.",
};

const app = {
  questions: [],
  formBlocked: "",
  questionsOk: true,
  stateOk: true,
  busy: false,
  showErrors: false,
  nextKey: 1,
  keyPrompt: null,
  modelsLoaded: false,
};

const $ = (id) => document.getElementById(id);

/* ------------------------------------------------------------------ small helpers */

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function pretty(value) {
  return JSON.stringify(value, null, 2);
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "className") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (value !== undefined && value !== null && value !== false)
      node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function percent(p) {
  return (Math.round(p * 1000) / 10).toFixed(1) + "%";
}

function fixed(value, digits = 2) {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(digits) : "–";
}

function timeoutMs() {
  const override = Number(document.body.dataset.timeoutMs);
  return override > 0 ? override : API_TIMEOUT_MS;
}

function announce(message) {
  $("status").textContent = message;
}

/* Each option input with its label and its error line (free-text ones turn autocomplete off). */
function drawOptionInputs() {
  for (const [id, field, label, placeholder, inputmode] of OPTION_INPUTS) {
    const error = `${field}-error`;
    const autocomplete = inputmode ? null : "off";
    const attrs = { id, type: "text", inputmode, placeholder, autocomplete };
    $("option-grid").append(
      el(
        "div",
        { className: "control" },
        el("label", { for: id, text: label }),
        el("input", { ...attrs, "aria-describedby": error }),
        el("p", { className: "field-error", id: error, hidden: true }),
      ),
    );
  }
}

/* ------------------------------------------------------------------ errors on the page */

function showFieldError(id, message) {
  const node = $(id);
  if (!node) return false;
  node.textContent = message;
  node.hidden = false;
  const control = document.querySelector(`[aria-describedby~="${id}"]`);
  if (control) control.setAttribute("aria-invalid", "true");
  return true;
}

function clearFieldError(id) {
  const node = $(id);
  if (!node) return;
  node.textContent = "";
  node.hidden = true;
  const control = document.querySelector(`[aria-describedby~="${id}"]`);
  if (control) control.removeAttribute("aria-invalid");
}

/* Bring the first error on the page into view (the banner first: it sits at the top). */
function revealFirstError() {
  const first = document.querySelector(".banner:not([hidden]), .field-error:not([hidden])");
  if (first) first.scrollIntoView({ block: "nearest" });
}

function showBanner(message) {
  $("banner-text").textContent = message;
  $("banner").hidden = false;
}

function hideBanner() {
  $("banner").hidden = true;
  $("banner-text").textContent = "";
}

function clearRequestErrors() {
  hideBanner();
  for (const id of new Set(Object.values(FIELD_ERRORS))) {
    if (id === "state-error" && !app.stateOk) continue;
    if (id === "questions-error" && !app.questionsOk) continue;
    clearFieldError(id);
  }
  for (const q of app.questions) q.error = "";
  drawQuestionErrors();
}

/* Put an API error message next to the field it names, or in the banner. */
function placeApiError(status, detail) {
  const named = /question '([^']*)'/.exec(detail);
  if (named && showQuestionError(named[1], detail)) return named[1];
  const field =
    /\b(state|questions|model|lang_guess|lang|min_confidence|max_len|tournament|shortlist)\b/.exec(
      detail,
    );
  if (field && showFieldError(FIELD_ERRORS[field[1]], detail)) {
    if (field[1] !== "state" && field[1] !== "questions" && field[1] !== "model") {
      document.querySelector("details.options").open = true;
    }
    return field[1];
  }
  showBanner(`The server refused the request (${status}): ${detail}`);
  return null;
}

function showQuestionError(qid, message) {
  const question = app.questions.find((q) => q.id === qid);
  if (!question && !app.formBlocked) return false;
  if (question) question.error = message;
  drawQuestionErrors();
  if (!question || jsonTabActive()) showFieldError("questions-error", message);
  return true;
}

/* ------------------------------------------------------------------ questions: model */

function rowsFromCriteria(type, criteria) {
  if (criteria === undefined) return [];
  if (type === "score") {
    if (!Array.isArray(criteria) || !criteria.every((c) => typeof c === "string")) return null;
    return criteria.map((text) => ({ label: "", text }));
  }
  if (Array.isArray(criteria) && criteria.every((c) => typeof c === "string")) {
    return criteria.map((label) => ({ label, text: "" }));
  }
  if (isObject(criteria) && Object.values(criteria).every((c) => typeof c === "string")) {
    return Object.entries(criteria).map(([label, text]) => ({ label, text }));
  }
  return null;
}

function nouLFromCriteria(criteria) {
  if (criteria === undefined) return { true: "", false: "" };
  if (!isObject(criteria)) return null;
  const keys = Object.keys(criteria);
  if (!keys.every((k) => k === "true" || k === "false")) return null;
  if (!Object.values(criteria).every((c) => typeof c === "string")) return null;
  return { true: criteria.true || "", false: criteria.false || "" };
}

/* One question from its JSON, or null when the form cannot show it faithfully. */
function questionFromJson(id, definition) {
  if (!isObject(definition)) return null;
  const { type, instructions, criteria, ...extra } = definition;
  if (typeof type !== "string") return null;
  if (instructions !== undefined && typeof instructions !== "string") return null;
  const question = {
    key: app.nextKey++,
    id,
    type,
    instructions: instructions || "",
    rows: [],
    noul: { true: "", false: "" },
    extra,
    error: "",
  };
  if (type === "noul") {
    question.noul = nouLFromCriteria(criteria);
    if (!question.noul) return null;
  } else {
    question.rows = rowsFromCriteria(type, criteria);
    if (!question.rows) return null;
  }
  return question;
}

function questionToJson(q) {
  const out = { type: q.type, instructions: q.instructions };
  if (q.type === "noul") {
    const criteria = {};
    if (q.noul.true) criteria.true = q.noul.true;
    if (q.noul.false) criteria.false = q.noul.false;
    if (Object.keys(criteria).length) out.criteria = criteria;
  } else if (q.type === "score") {
    out.criteria = q.rows.map((r) => r.text);
  } else if (q.rows.some((r) => r.text)) {
    out.criteria = Object.fromEntries(q.rows.map((r) => [r.label, r.text]));
  } else {
    out.criteria = q.rows.map((r) => r.label);
  }
  return { ...out, ...q.extra };
}

function questionsToJson() {
  return Object.fromEntries(app.questions.map((q) => [q.id, questionToJson(q)]));
}

/* Replace the questions from a JSON object; the form is blocked if it cannot show them. */
function loadQuestions(object) {
  const questions = [];
  app.formBlocked = "";
  for (const [id, definition] of Object.entries(object)) {
    const question = questionFromJson(id, definition);
    if (!question) {
      app.formBlocked = `Question '${id}' has a shape the form cannot show; edit it as JSON.`;
      break;
    }
    questions.push(question);
  }
  app.questions = app.formBlocked ? [] : questions;
  app.rawQuestions = object;
}

function currentQuestions() {
  return app.formBlocked ? app.rawQuestions : questionsToJson();
}

/* The one backticked state field the instructions name, or null (as laya.presets.state_field). */
function stateField() {
  const names = new Set();
  for (const definition of Object.values(currentQuestions())) {
    const text = isObject(definition) ? definition.instructions : null;
    if (typeof text !== "string") continue;
    for (const match of text.matchAll(/`([^`\s]+)`/g)) names.add(match[1]);
  }
  return names.size === 1 ? [...names][0] : null;
}

/* Client-side checks; returns {qid: message} and sets question.error. */
function checkQuestions() {
  const seen = new Set();
  for (const q of app.questions) {
    q.error = questionProblem(q, seen);
    seen.add(q.id);
  }
  return app.questions.filter((q) => q.error).length;
}

function questionProblem(q, seen) {
  if (!q.id.trim()) return "This question needs an id.";
  if (seen.has(q.id)) return `question '${q.id}': the id is used twice.`;
  if (q.type === "choice") {
    if (!q.rows.length) return `question '${q.id}' has no options: add at least one.`;
    const labels = new Set();
    for (const [i, row] of q.rows.entries()) {
      if (!row.label.trim()) return `question '${q.id}': option ${i + 1} has no label.`;
      if (labels.has(row.label)) return `question '${q.id}': option '${row.label}' appears twice.`;
      labels.add(row.label);
    }
  }
  if (q.type === "score" && !q.rows.length) {
    return `question '${q.id}' has no levels: add at least one.`;
  }
  return "";
}

/* ------------------------------------------------------------------ questions: form */

function jsonTabActive() {
  return $("tab-json").getAttribute("aria-selected") === "true";
}

function drawForm() {
  const list = $("question-list");
  list.replaceChildren();
  if (app.formBlocked) {
    list.append(el("li", { className: "hint", text: app.formBlocked }));
    $("add-question").disabled = true;
    return;
  }
  $("add-question").disabled = false;
  for (const question of app.questions) list.append(drawQuestion(question));
  drawQuestionErrors();
}

function drawQuestion(q) {
  const item = $("question-template").content.firstElementChild.cloneNode(true);
  item.dataset.key = q.key;
  const prefix = `q${q.key}`;
  wireControl(item, "id", `${prefix}-id`, q.id, (value) => {
    q.id = value;
    item.setAttribute("aria-label", `Question ${value}`);
  });
  wireControl(item, "instructions", `${prefix}-instructions`, q.instructions, (value) => {
    q.instructions = value;
  });
  const select = item.querySelector('[data-field="type"]');
  if (!TYPES.includes(q.type)) select.append(el("option", { value: q.type, text: q.type }));
  wireControl(item, "type", `${prefix}-type`, q.type, (value) => changeType(q, value), "change");
  item.setAttribute("aria-label", `Question ${q.id}`);
  const error = item.querySelector(".question-error");
  error.id = `${prefix}-error`;
  for (const control of item.querySelectorAll("[data-field]")) {
    control.setAttribute("aria-describedby", error.id);
  }
  const remove = item.querySelector(".remove-question");
  remove.setAttribute("aria-label", `Remove question ${q.id || ""}`.trim());
  remove.addEventListener("click", () => removeQuestion(q));
  drawCriteria(item.querySelector(".criteria"), q);
  return item;
}

function wireControl(item, field, id, value, update, event = "input") {
  const control = item.querySelector(`[data-field="${field}"]`);
  control.id = id;
  control.value = value;
  control.previousElementSibling.setAttribute("for", id);
  control.addEventListener(event, () => {
    update(control.value);
    formChanged();
  });
}

function drawCriteria(box, q) {
  const list = box.querySelector(".criteria-list");
  const title = box.querySelector(".criteria-title");
  const add = box.querySelector(".add-criterion");
  list.replaceChildren();
  if (q.type === "noul") {
    title.textContent = "What true and false mean (optional)";
    add.hidden = true;
    for (const side of ["true", "false"]) list.append(drawNoulRow(q, side));
    return;
  }
  const score = q.type === "score";
  const noun = score ? "level" : "option";
  title.textContent = q.rows.length
    ? score
      ? "Levels (lowest first)"
      : "Options: label and description"
    : `No ${noun}s yet: add at least one.`;
  add.hidden = false;
  add.textContent = `+ Add ${noun}`;
  add.onclick = () => addRow(q);
  q.rows.forEach((row, i) => list.append(drawRow(q, row, i, score)));
}

function drawRow(q, row, index, score) {
  const noun = score ? "level" : "option";
  const item = el("li", { className: score ? "criterion no-label" : "criterion" });
  if (score) {
    item.append(el("span", { className: "level", text: String(index), "aria-hidden": "true" }));
  } else {
    item.append(rowInput(row, "label", `Label of option ${index + 1} of ${q.id}`, "label"));
  }
  const describe = score ? `Description of level ${index}` : `Description of option ${index + 1}`;
  item.append(
    rowInput(
      row,
      "text",
      `${describe} of ${q.id}`,
      score ? "description" : "description (optional)",
    ),
  );
  const remove = el("button", {
    type: "button",
    className: "ghost",
    "aria-label": `Remove ${noun} ${score ? index : index + 1} of ${q.id}`,
    text: "×",
  });
  remove.addEventListener("click", () => removeRow(q, index));
  item.append(remove);
  return item;
}

function rowInput(row, field, label, placeholder) {
  const input = el("input", {
    type: "text",
    "aria-label": label,
    placeholder,
    spellcheck: "false",
  });
  input.value = row[field];
  input.addEventListener("input", () => {
    row[field] = input.value;
    formChanged();
  });
  return input;
}

function drawNoulRow(q, side) {
  const item = el("li", { className: "criterion no-label" });
  item.append(el("span", { className: "level", text: side, "aria-hidden": "true" }));
  const input = el("input", {
    type: "text",
    "aria-label": `What ${side} means for ${q.id}`,
    placeholder: "optional",
  });
  input.value = q.noul[side];
  input.addEventListener("input", () => {
    q.noul[side] = input.value;
    formChanged();
  });
  item.append(input, el("span"));
  return item;
}

function drawQuestionErrors() {
  for (const q of app.questions) {
    const node = $(`q${q.key}-error`);
    if (!node) continue;
    node.textContent = q.error || "";
    node.hidden = !q.error;
    node.closest(".question").classList.toggle("invalid", Boolean(q.error));
    for (const control of node.closest(".question").querySelectorAll("[data-field]")) {
      if (q.error) control.setAttribute("aria-invalid", "true");
      else control.removeAttribute("aria-invalid");
    }
  }
}

function focusIn(q, selector) {
  const item = document.querySelector(`.question[data-key="${q.key}"]`);
  const target = item && item.querySelector(selector);
  if (target) target.focus();
}

function changeType(q, type) {
  if (q.type === "choice" && type === "score") {
    q.rows = q.rows.map((r) => ({ label: "", text: r.text || r.label }));
  } else if (q.type === "score" && type === "choice") {
    q.rows = q.rows.map((r) => ({ label: r.text, text: "" }));
  }
  q.type = type;
  drawForm();
  focusIn(q, '[data-field="type"]');
}

function addQuestion() {
  const ids = new Set(app.questions.map((q) => q.id));
  let n = app.questions.length + 1;
  while (ids.has(`question_${n}`)) n += 1;
  const q = questionFromJson(`question_${n}`, { type: "choice", instructions: "" });
  app.questions.push(q);
  drawForm();
  formChanged();
  focusIn(q, '[data-field="id"]');
}

function removeQuestion(q) {
  const index = app.questions.indexOf(q);
  app.questions.splice(index, 1);
  drawForm();
  formChanged();
  const next = app.questions[Math.min(index, app.questions.length - 1)];
  if (next) focusIn(next, ".remove-question");
  else $("add-question").focus();
}

function addRow(q) {
  q.rows.push({ label: "", text: "" });
  drawForm();
  formChanged();
  const item = document.querySelector(`.question[data-key="${q.key}"]`);
  const inputs = item.querySelectorAll(".criterion input");
  inputs[q.type === "score" ? inputs.length - 1 : inputs.length - 2].focus();
}

function removeRow(q, index) {
  q.rows.splice(index, 1);
  drawForm();
  formChanged();
  focusIn(q, ".add-criterion");
}

/* The form changed: rewrite the JSON tab, mark the preset as edited, re-check if asked. */
function formChanged() {
  $("questions-json").value = pretty(questionsToJson());
  app.questionsOk = true;
  clearFieldError("questions-error");
  $("preset").value = "";
  if (app.showErrors) {
    checkQuestions();
    drawQuestionErrors();
  }
  drawStateHint();
  updateRunButton();
}

/* The JSON tab changed: parse it; a valid object replaces the questions and redraws the form. */
function jsonChanged() {
  const text = $("questions-json").value;
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return setQuestionsInvalid(`Invalid JSON: ${err.message}`);
  }
  if (!isObject(value))
    return setQuestionsInvalid('questions must be a JSON object: {"id": {...}}');
  app.questionsOk = true;
  clearFieldError("questions-error");
  loadQuestions(value);
  $("preset").value = "";
  drawForm();
  drawStateHint();
  updateRunButton();
}

function setQuestionsInvalid(message) {
  app.questionsOk = false;
  showFieldError("questions-error", message);
  updateRunButton();
}

function selectTab(name) {
  if (name === "form" && !app.questionsOk) {
    announce("Fix the JSON before switching to the form.");
    $("questions-json").focus();
    return;
  }
  for (const tab of ["form", "json"]) {
    const selected = tab === name;
    $(`tab-${tab}`).setAttribute("aria-selected", String(selected));
    $(`tab-${tab}`).tabIndex = selected ? 0 : -1;
    $(`panel-${tab}`).hidden = !selected;
  }
  $(`tab-${name}`).focus();
}

function onTabKey(event) {
  if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
  event.preventDefault();
  selectTab(jsonTabActive() ? "form" : "json");
}

/* ------------------------------------------------------------------ state editor */

function stateMode() {
  return document.querySelector('input[name="state-mode"]:checked').value;
}

/* The state to send: {value} or {error}. */
function readState() {
  const text = $("state").value;
  if (stateMode() === "text") {
    const field = stateField(); /* an empty state is the server's to refuse (laya.engine.states) */
    return { value: field ? { [field]: text } : text };
  }
  try {
    const value = JSON.parse(text);
    if (value === null) return { error: "state must not be null." };
    return { value };
  } catch (err) {
    return { error: `Invalid JSON: ${err.message}` };
  }
}

function stateChanged() {
  if (stateMode() === "json") {
    const { error } = readState();
    app.stateOk = !error || !error.startsWith("Invalid JSON");
    if (app.stateOk) clearFieldError("state-error");
    else showFieldError("state-error", error);
  } else {
    app.stateOk = true;
    if (app.showErrors) clearFieldError("state-error");
  }
  drawStateHint();
  updateRunButton();
}

function switchStateMode() {
  const box = $("state");
  const field = stateField();
  if (stateMode() === "json") {
    const text = box.value;
    box.value = pretty(field ? { [field]: text } : text);
  } else {
    try {
      const value = JSON.parse(box.value);
      if (typeof value === "string") box.value = value;
      else if (
        field &&
        isObject(value) &&
        typeof value[field] === "string" &&
        Object.keys(value).length === 1
      ) {
        box.value = value[field];
      }
    } catch {
      /* keep the text as it is: it is sent as a string now */
    }
  }
  box.classList.toggle("json", stateMode() === "json");
  stateChanged();
}

function drawStateHint() {
  const hint = $("state-hint");
  const field = stateField();
  hint.replaceChildren();
  if (stateMode() === "json") {
    hint.append("Any JSON value: an object, a list or a string.");
    if (field) hint.append(" These questions read ", el("code", { text: field }), ".");
  } else if (field) {
    hint.append(
      "Sent as ",
      el("code", { text: `{"${field}": …}` }),
      ": the questions read ",
      el("code", { text: field }),
      ".",
    );
  } else {
    hint.append("Sent as a plain string.");
  }
}

/* ------------------------------------------------------------------ request */

function readOptions() {
  const options = {};
  const errors = {};
  const lang = $("lang").value.trim();
  if (lang) options.lang = lang;
  const minConfidence = $("min-confidence").value.trim();
  if (minConfidence) {
    const parsed = minConfidence.startsWith("{") ? tryJson(minConfidence) : Number(minConfidence);
    if (parsed === undefined || (typeof parsed === "number" && Number.isNaN(parsed))) {
      errors["min_confidence-error"] = "min_confidence must be a number in [0, 1] or a JSON map.";
    } else options.min_confidence = parsed;
  }
  const maxLen = $("max-len").value.trim();
  if (maxLen) {
    const parsed = Number(maxLen);
    if (!Number.isInteger(parsed)) errors["max_len-error"] = "max_len must be a whole number.";
    else options.max_len = parsed;
  }
  const tournament = $("tournament").value.trim().toLowerCase();
  if (tournament === "auto") options.tournament = true;
  else if (tournament) {
    const parsed = Number(tournament);
    if (!Number.isInteger(parsed) || parsed < 2)
      errors["tournament-error"] = "tournament is auto or a group size of at least 2.";
    else options.tournament = parsed;
  }
  const shortlist = $("shortlist").value.trim();
  if (shortlist) {
    const parsed = Number(shortlist);
    if (!Number.isInteger(parsed) || parsed < 1)
      errors["shortlist-error"] = "shortlist is a whole number k of at least 1.";
    else options.shortlist = parsed;
  }
  return { options, errors };
}

function tryJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/* The request body, or null after showing what is wrong next to the fields. */
function buildBody() {
  let ok = app.questionsOk && app.stateOk;
  const state = readState();
  if (state.error) {
    showFieldError("state-error", state.error);
    ok = false;
  }
  const questions = currentQuestions();
  if (app.questionsOk && !Object.keys(questions).length) {
    showFieldError("questions-error", "Add at least one question.");
    ok = false;
  }
  if (!app.formBlocked && checkQuestions()) {
    drawQuestionErrors();
    if (jsonTabActive())
      showFieldError("questions-error", app.questions.find((q) => q.error).error);
    ok = false;
  }
  const { options, errors } = readOptions();
  for (const [id, message] of Object.entries(errors)) showFieldError(id, message);
  if (Object.keys(errors).length) {
    document.querySelector("details.options").open = true;
    ok = false;
  }
  if (!ok) return null;
  const body = { state: state.value, questions };
  const model = $("model").value;
  if (model) body.model = model;
  return { ...body, ...options };
}

function updateRunButton() {
  const blocked = !app.questionsOk || !app.stateOk;
  $("run").disabled = app.busy || blocked;
  $("run").title = blocked ? "Fix the JSON first" : "";
}

function setBusy(busy) {
  app.busy = busy;
  $("run").firstChild.textContent = busy ? "Running… " : "Run ";
  $("results").setAttribute("aria-busy", String(busy));
  $("copy-curl").disabled = busy;
  $("copy-python").disabled = busy;
  updateRunButton();
}

/* One fetch with a timeout and the stored key; throws Error with a readable message. */
async function callApi(path, { method = "GET", body, timeout = META_TIMEOUT_MS } = {}) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeout);
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) headers.Authorization = `Bearer ${key}`;
  const started = performance.now();
  try {
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: controller.signal,
      cache: "no-store",
    });
    const text = await response.text();
    return {
      status: response.status,
      ok: response.ok,
      data: tryJson(text),
      text,
      ms: performance.now() - started,
      serverMs: response.headers.get("X-Inference-Time-Ms"),
    };
  } catch (err) {
    if (err.name === "AbortError") {
      throw new Error(
        `The server did not answer within ${Math.round(timeout / 1000)} s; try again.`,
      );
    }
    throw new Error(`Cannot reach the server at ${location.origin}. Is laya serve running?`);
  } finally {
    clearTimeout(timer);
  }
}

/* callApi, asking for the API key (once, then kept for the tab) when the server answers 401. */
async function request(path, options) {
  let reply = await callApi(path, options);
  while (reply.status === 401) {
    const refused = Boolean(sessionStorage.getItem(KEY_STORE));
    const key = await askForKey(refused);
    if (!key) return reply;
    sessionStorage.setItem(KEY_STORE, key);
    reply = await callApi(path, options);
    if (reply.status !== 401 && !app.modelsLoaded && path !== "models") loadModels();
  }
  return reply;
}

function askForKey(refused) {
  if (app.keyPrompt) return app.keyPrompt;
  const dialog = $("key-dialog");
  $("key-message").textContent = refused
    ? "The server refused that key. Enter the key again."
    : "This server needs a key (LAYA_API_KEY). It is kept in this browser tab only.";
  $("key-input").value = "";
  app.keyPrompt = new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => {
        app.keyPrompt = null;
        const key = $("key-input").value.trim();
        resolve(dialog.returnValue === "save" && key ? key : null);
      },
      { once: true },
    );
  });
  dialog.returnValue = "";
  dialog.showModal();
  $("key-input").focus();
  return app.keyPrompt;
}

function detailOf(reply) {
  const detail = reply.data && reply.data.detail;
  if (typeof detail === "string") return detail;
  if (detail !== undefined) return JSON.stringify(detail);
  return reply.text.trim().slice(0, 300) || `HTTP ${reply.status}`;
}

/* The server's one-line detail as a sentence: capital first letter, a full stop. */
function sentence(text) {
  const trimmed = String(text).trim();
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

function showFailure(reply) {
  const detail = detailOf(reply);
  if (reply.status === 401) {
    showBanner("This server needs an API key (LAYA_API_KEY). Press Run to enter it.");
  } else if (reply.status === 503 || reply.status === 504 || /^checkpoint '/.test(detail)) {
    showBanner(sentence(detail)); /* a checkpoint not here, a busy server, a deadline */
  } else if (reply.status >= 500) {
    showBanner(`The server failed (${reply.status}): ${detail}`);
  } else {
    placeApiError(reply.status, detail);
  }
  revealFirstError();
  announce(`Request failed (${reply.status}): ${detail}`);
}

async function run() {
  if (app.busy) return;
  app.showErrors = true;
  clearRequestErrors();
  const body = buildBody();
  if (!body) {
    revealFirstError();
    announce("Nothing was sent: fix the marked fields first.");
    return;
  }
  setBusy(true);
  announce("Running…");
  try {
    const reply = await request("v1/systemone", { method: "POST", body, timeout: timeoutMs() });
    if (reply.ok && isObject(reply.data)) drawResult(reply.data, reply);
    else showFailure(reply);
  } catch (err) {
    showBanner(err.message);
    revealFirstError();
    announce(err.message);
  } finally {
    setBusy(false);
    document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
  }
}

/* ------------------------------------------------------------------ results */

function drawResult(result, reply) {
  const answers = isObject(result.answers) ? result.answers : {};
  const cards = Object.entries(answers).map(([qid, answer]) => drawCard(qid, answer));
  $("results").replaceChildren(...cards);
  drawMeta(result, reply);
  const model = (result.routing && result.routing.model) || result.model || "the server";
  const ms = reply.serverMs ? Number(reply.serverMs) : reply.ms;
  announce(
    `${cards.length} answer${cards.length === 1 ? "" : "s"} from ${model} in ${Math.round(ms)} ms.`,
  );
  if (window.matchMedia("(max-width: 860px)").matches) $("results-heading").scrollIntoView();
}

function drawMeta(result, reply) {
  const routing = isObject(result.routing) ? result.routing : {};
  const usage = isObject(result.usage) ? result.usage : {};
  const warnings = Array.isArray(result.x_warnings) ? result.x_warnings : [];
  const rows = [
    ["Warning", warnings.map((w) => sentence(String((w && w.message) || w))).join(" ")],
    ["Model", routing.model || result.model],
    ["Routing", routing.reason],
    ["Latency", latencyText(reply)],
    [
      "Tokens",
      usage.input_tokens === undefined
        ? null
        : `${usage.input_tokens} in` + (usage.truncated ? " (state truncated)" : ""),
    ],
  ];
  const meta = $("meta");
  meta.replaceChildren();
  for (const [term, value] of rows) {
    if (value === undefined || value === null || value === "") continue;
    meta.append(
      el("dt", { text: term }),
      el("dd", { text: String(value), "data-meta": term.toLowerCase() }),
    );
  }
  meta.hidden = false;
}

function latencyText(reply) {
  const total = `${Math.round(reply.ms)} ms round trip`;
  return reply.serverMs ? `${Number(reply.serverMs).toFixed(1)} ms inference · ${total}` : total;
}

function drawCard(qid, answer) {
  const card = el("article", {
    className: "card",
    "data-qid": qid,
    "aria-label": `Answer to ${qid}`,
  });
  const type = isObject(answer) ? answer.type : undefined;
  const head = el("div", { className: "card-head" }, el("h3", { text: qid }));
  const badges = el("div", {}, el("span", { className: "badge", text: type || "?" }));
  head.append(badges);
  card.append(head);
  if (isObject(answer) && answer.x_unsure) {
    card.classList.add("low");
    badges.append(" ", el("span", { className: "badge warn", text: "unsure" }));
  }
  if (isObject(answer) && answer.low_confidence) {
    card.classList.add("low");
    badges.append(" ", el("span", { className: "badge warn", text: "low confidence" }));
  }
  if (type === "choice") drawChoice(card, answer);
  else if (type === "score") drawScore(card, answer);
  else if (type === "noul") drawNoul(card, answer);
  else card.append(el("pre", { text: pretty(answer) }));
  if (isObject(answer)) card.append(drawConfidence(answer));
  return card;
}

/* A choice's "abstain" row, and its answer when "none of these" won. */
const NONE_OF_THESE = "(none of these)";

function drawChoice(card, answer) {
  const probabilities = isObject(answer.probabilities) ? answer.probabilities : {};
  const read = optionsRead(answer);
  const entries = Object.entries(probabilities).filter(([label]) => !read || read.has(label));
  const none = answer.choice === null;
  const shown = none ? NONE_OF_THESE : String(answer.choice);
  card.append(el("p", { className: "answer", "data-value": shown, text: shown }));
  const bars = entries.map(([label, p]) => ({ label, p, chosen: !none && label === shown }));
  if (typeof answer.x_abstain === "number") {
    bars.push({ label: NONE_OF_THESE, p: answer.x_abstain, chosen: none });
  }
  card.append(drawBars(bars));
  if (read) card.append(drawNarrowed(answer, Object.keys(probabilities).length - entries.length));
}

/* The labels a tournament's last group or a shortlist kept (null: every option was read). */
function optionsRead(answer) {
  const finalists = isObject(answer.x_tournament) ? answer.x_tournament.finalists : null;
  const candidates = isObject(answer.x_shortlist) ? answer.x_shortlist.candidates : null;
  const labels = Array.isArray(finalists) ? finalists : candidates;
  return Array.isArray(labels) ? new Set(labels.map(String)) : null;
}

function drawNarrowed(answer, hidden) {
  const parts = [];
  if (isObject(answer.x_tournament)) {
    const { finalists, rounds } = answer.x_tournament;
    parts.push(`tournament: ${finalists.length} finalists after ${rounds} rounds`);
  }
  if (isObject(answer.x_shortlist)) {
    parts.push(`shortlist: the ${answer.x_shortlist.candidates.length} nearest options read`);
  }
  parts.push(`${hidden} other options at 0% not shown`);
  return el("p", { className: "narrowed", text: parts.join(" · ") });
}

function drawScore(card, answer) {
  const probabilities = isObject(answer.probabilities) ? answer.probabilities : {};
  const legend = isObject(answer.legend) ? answer.legend : {};
  const entries = Object.entries(probabilities);
  let mode = null;
  for (const [level, p] of entries) if (mode === null || p > probabilities[mode]) mode = level;
  const line = el("p", {
    className: "answer",
    "data-value": answer.score,
    title: EXPLAIN.score,
    text: fixed(answer.score),
  });
  if (mode !== null)
    line.append(" ", el("small", { text: `most likely ${mode}: ${legend[mode] || ""}` }));
  card.append(line);
  card.append(
    drawBars(
      entries.map(([level, p]) => ({
        label: legend[level] ? `${level} · ${legend[level]}` : level,
        key: level,
        p,
        chosen: level === mode,
      })),
    ),
  );
}

/* A noul answer reads yes / no, as on the command line; its one bar is p(true). */
function drawNoul(card, answer) {
  const p = Number(answer.noul);
  const value = p >= 0.5 ? "yes" : "no";
  card.append(el("p", { className: "answer", "data-value": value, text: value }));
  card.append(drawBars([{ label: "p(true)", key: "true", p, chosen: p >= 0.5 }]));
}

function drawBars(bars) {
  const list = el("ul", { className: "bars" });
  for (const bar of bars) {
    const p = Number(bar.p);
    const row = el("li", {
      className: bar.chosen ? "bar-row chosen" : "bar-row",
      "data-label": bar.key === undefined ? bar.label : bar.key,
      "data-p": String(bar.p),
      "aria-current": bar.chosen ? "true" : false,
    });
    const fill = el("span", { className: "bar-fill" });
    fill.style.width = `${Math.max(0, Math.min(100, p * 100))}%`;
    row.append(
      el("span", { className: "bar-label", title: bar.label, text: bar.label }),
      el("span", { className: "bar-track", "aria-hidden": "true" }, fill),
      el("span", {
        className: "bar-value",
        title: EXPLAIN.probability,
        text: Number.isFinite(p) ? percent(p) : "–",
      }),
    );
    if (bar.chosen) row.append(el("span", { className: "visually-hidden", text: " (chosen)" }));
    list.append(row);
  }
  return list;
}

function drawConfidence(answer) {
  const line = el("p", { className: "confidence" });
  const parts = [
    ["confidence", answer.confidence, EXPLAIN.confidence],
    ["answer confidence", answer.answer_confidence, EXPLAIN.answer_confidence],
    ["Jev", answer.x_jev_confidence, EXPLAIN.jev],
  ];
  parts
    .filter(([, v]) => typeof v === "number")
    .forEach(([name, value, explain], i) => {
      if (i) line.append(" · ");
      line.append(el("span", { className: "explained", title: explain }, `${name} `, el("b", { text: fixed(value) })));
    });
  if (answer.abstention) line.append(` · ${answer.abstention}`);
  return line;
}

/* ------------------------------------------------------------------ copy as curl / Python */

function endpoint() {
  return new URL("v1/systemone", location.href).href;
}

function curlSnippet(body) {
  const auth = sessionStorage.getItem(KEY_STORE)
    ? ` \\\n  -H "Authorization: Bearer $LAYA_API_KEY"`
    : "";
  return (
    `curl -sS -X POST '${endpoint()}' \\\n  -H 'Content-Type: application/json'${auth} \\\n` +
    `  --data-binary @- <<'JSON'\n${pretty(body)}\nJSON\n`
  );
}

function pythonLiteral(value, indent = "") {
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value !== "object") return JSON.stringify(value);
  const inner = `${indent}    `;
  const items = Array.isArray(value)
    ? value.map((v) => inner + pythonLiteral(v, inner))
    : Object.entries(value).map(
        ([k, v]) => `${inner}${JSON.stringify(k)}: ${pythonLiteral(v, inner)}`,
      );
  const [open, close] = Array.isArray(value) ? ["[", "]"] : ["{", "}"];
  return items.length ? `${open}\n${items.join(",\n")},\n${indent}${close}` : open + close;
}

function pythonSnippet(body) {
  const keyed = Boolean(sessionStorage.getItem(KEY_STORE));
  const lines = keyed ? ["import os", ""] : [];
  lines.push("import httpx", "", `body = ${pythonLiteral(body)}`);
  const headers = keyed
    ? ', headers={"Authorization": f"Bearer {os.environ[\'LAYA_API_KEY\']}"}'
    : "";
  lines.push(
    `response = httpx.post(${JSON.stringify(endpoint())}, json=body${headers}, timeout=120)`,
    "response.raise_for_status()",
    "result = response.json()",
    'for qid, answer in result["answers"].items():',
    "    print(qid, answer)",
  );
  return lines.join("\n") + "\n";
}

async function copySnippet(kind) {
  clearRequestErrors();
  const body = buildBody();
  if (!body) {
    announce("Nothing to copy: fix the marked fields first.");
    return;
  }
  const text = kind === "curl" ? curlSnippet(body) : pythonSnippet(body);
  $("snippet").textContent = text;
  $("snippet").dataset.kind = kind;
  $("snippet-title").textContent = kind === "curl" ? "curl command" : "Python (httpx)";
  $("snippet-box").hidden = false;
  $("snippet-box").open = true;
  const copied = await writeClipboard(text);
  announce(
    copied
      ? `Copied the ${kind === "curl" ? "curl command" : "Python snippet"}.`
      : "Could not use the clipboard: select the snippet below and copy it.",
  );
}

async function writeClipboard(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/* ------------------------------------------------------------------ presets and models */

async function loadPresets() {
  try {
    const reply = await request("presets");
    if (!reply.ok || !isObject(reply.data) || !isObject(reply.data.presets)) return;
    app.presets = reply.data.presets;
  } catch (err) {
    showBanner(err.message);
    return;
  }
  const select = $("preset");
  for (const [name, preset] of Object.entries(app.presets)) {
    select.append(el("option", { value: name, text: name, title: preset.description || "" }));
  }
  if (app.presets.triage && !app.questions.length) applyPreset("triage");
}

function applyPreset(name) {
  const preset = app.presets[name];
  if (!preset) return;
  loadQuestions(preset.questions);
  $("questions-json").value = pretty(preset.questions);
  app.questionsOk = true;
  clearFieldError("questions-error");
  drawForm();
  $("preset").value = name;
  drawStateHint();
  updateRunButton();
  announce(`Loaded the ${name} preset: ${preset.description || ""}`.trim());
}

async function loadModels() {
  let reply;
  try {
    reply = await request("models");
  } catch (err) {
    showBanner(err.message);
    return;
  }
  if (!reply.ok || !isObject(reply.data)) {
    showFieldError("model-error", `Could not list the models: ${detailOf(reply)}`);
    return;
  }
  clearFieldError("model-error");
  drawModels(reply.data);
  app.modelsLoaded = true;
}

function drawModels(data) {
  const select = $("model");
  const keep = select.value;
  const checkpoints = isObject(data.checkpoints) ? data.checkpoints : {};
  select.replaceChildren(el("option", { value: "", text: "Auto (the server decides)" }));
  const group = el("optgroup", { label: "Checkpoints" });
  for (const [name, info] of Object.entries(checkpoints)) {
    const notes = [name === data.default ? "default" : "", info && info.resident ? "loaded" : ""];
    const suffix = notes.filter(Boolean).join(", ");
    group.append(el("option", { value: name, text: suffix ? `${name} (${suffix})` : name }));
  }
  select.append(group);
  const aliases = isObject(data.aliases) ? Object.entries(data.aliases) : [];
  if (aliases.length) {
    const aliasGroup = el("optgroup", { label: "Aliases" });
    for (const [alias, name] of aliases)
      aliasGroup.append(el("option", { value: alias, text: `${alias} → ${name}` }));
    select.append(aliasGroup);
  }
  select.value = keep;
}

/* ------------------------------------------------------------------ wiring */

function onKey(event) {
  if ($("key-dialog").open) return;
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    if (!$("run").disabled) run();
    else announce("Fix the JSON first: the message is under the editor.");
  }
}

function wire() {
  $("run").addEventListener("click", run);
  $("banner-close").addEventListener("click", hideBanner);
  $("key-cancel").addEventListener("click", () => $("key-dialog").close("cancel"));
  $("preset").addEventListener("change", (e) => e.target.value && applyPreset(e.target.value));
  $("model").addEventListener("change", () => clearFieldError("model-error"));
  $("state").addEventListener("input", stateChanged);
  for (const radio of document.querySelectorAll('input[name="state-mode"]')) {
    radio.addEventListener("change", switchStateMode);
  }
  $("tab-form").addEventListener("click", () => selectTab("form"));
  $("tab-json").addEventListener("click", () => selectTab("json"));
  $("tab-form").addEventListener("keydown", onTabKey);
  $("tab-json").addEventListener("keydown", onTabKey);
  $("questions-json").addEventListener("input", jsonChanged);
  $("add-question").addEventListener("click", addQuestion);
  $("copy-curl").addEventListener("click", () => copySnippet("curl"));
  $("copy-python").addEventListener("click", () => copySnippet("python"));
  for (const id of ["lang", "min-confidence", "max-len"]) {
    $(id).addEventListener("input", () => clearFieldError($(id).getAttribute("aria-describedby")));
  }
  document.addEventListener("keydown", onKey);
}

async function init() {
  drawOptionInputs();
  wire();
  loadQuestions({});
  drawForm();
  $("questions-json").value = pretty({});
  drawStateHint();
  updateRunButton();
  await loadPresets();
  await loadModels();
  document.body.dataset.ready = "true";
}

document.addEventListener("DOMContentLoaded", init);
