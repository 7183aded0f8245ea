// The self-check page's script. It mirrors question_bank/answers.py (reading typed
// answers and judging them) and question_bank/exporters/_payload.py (decoding the
// obfuscated answer keys); tests/test_exports_browser.py runs both sides on the same
// table of inputs. window.selfcheck exposes the functions so the tests can call them.
"use strict";
(function () {
  // --- reading typed answers (mirrors question_bank/answers.py) -------------
  var NUMBER = String.raw`[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?`;
  var POWER = String.raw`10\s*(?:\^|\*\*)\s*\{?\s*([+-]?\d+)\s*\}?`;
  var PLAIN_NUMBER = new RegExp("^" + NUMBER + "$");
  var TIMES_TEN = new RegExp("^(" + NUMBER + String.raw`)\s*(?:[x×*·]|\\times)\s*` + POWER + "$");
  var TEN_TO = new RegExp("^" + POWER + "$");
  var GROUPED = /^[+-]?\d{1,3}(?:([, _])\d{3})(?:\1\d{3})*(?:\.\d+)?$/;
  var FRACTION = new RegExp("^(" + NUMBER + String.raw`)\s*/\s*(` + NUMBER + ")$");
  var DASHES = {"\u2212": "-", "\u2013": "-", "\u2012": "-", "\u00a0": " ", "\u202f": " ", "\u2009": " "};
  var NUMBER_HINT = "Type a number like 0.0012, 1.2e-3 or 1.2 x 10^-3.";
  var INTEGER_HINT = "Type a whole number like 116534784 or 116,534,784.";
  var SHAPE_HINT = "Type a shape like (4, 8, 24), [4, 8, 24] or 4x8x24.";
  var TRUE_FALSE_HINT = "Answer true or false (t/f, yes/no).";
  var TRUE_WORDS = ["t", "true", "yes", "y", "1"];
  var FALSE_WORDS = ["f", "false", "no", "n", "0"];

  function ResponseError(message) { this.message = message; }

  function quoted(text) { return "'" + text.trim() + "'"; }

  function normalise(text) {
    Object.keys(DASHES).forEach(function (old) { text = text.split(old).join(DASHES[old]); });
    return text.trim();
  }

  function stripUnit(text, unit) {
    if (!unit) { return text; }
    var singular = unit.endsWith("s") ? unit.slice(0, -1) : unit;
    var words = [unit, singular];
    for (var i = 0; i < words.length; i++) {
      var word = words[i];
      if (text.toLowerCase().endsWith(word.toLowerCase()) && text.length > word.length) {
        return text.slice(0, -word.length).trim();
      }
    }
    return text;
  }

  function numberOrNull(text) {
    var m;
    if (PLAIN_NUMBER.test(text)) { return Number(text); }
    if (GROUPED.test(text)) { return Number(text.replace(/[, _]/g, "")); }
    if ((m = TIMES_TEN.exec(text))) { return Number(m[1]) * Math.pow(10, Number(m[2])); }
    if ((m = TEN_TO.exec(text))) { return Math.pow(10, Number(m[1])); }
    if ((m = FRACTION.exec(text)) && Number(m[2]) !== 0) { return Number(m[1]) / Number(m[2]); }
    return null;
  }

  function parseNumber(raw, unit) {
    var text = stripUnit(normalise(raw), unit || "");
    if (!text) { throw new ResponseError("Type an answer first. " + NUMBER_HINT); }
    var value = numberOrNull(text);
    if (value === null || !isFinite(value)) {
      var where = unit ? " (in " + unit + ")" : "";
      throw new ResponseError("Could not read " + quoted(raw) + " as a number" + where + ". " + NUMBER_HINT);
    }
    return value;
  }

  function parseInteger(raw, unit) {
    var text = stripUnit(normalise(raw), unit || "");
    if (!text) { throw new ResponseError("Type an answer first. " + INTEGER_HINT); }
    var digits = GROUPED.test(text) ? text.replace(/[, _]/g, "") : text;
    if (/^[+-]?\d+$/.test(digits)) { return Number(digits); }
    var value = numberOrNull(text);
    if (value === null || !isFinite(value)) {
      throw new ResponseError("Could not read " + quoted(raw) + " as a whole number. " + INTEGER_HINT);
    }
    if (!Number.isInteger(value)) {
      throw new ResponseError(quoted(raw) + " is not a whole number; this answer is a count. " + INTEGER_HINT);
    }
    return value;
  }

  function parseShape(raw) {
    var text = normalise(raw);
    var inner = text.replace(/^[(\[{]\s*|\s*[)\]}]$/g, "");
    var parts = inner.split(/\s*(?:,|[x×X*]|\s)\s*/).filter(function (p) { return p; });
    if (!text || !parts.length || !parts.every(function (p) { return /^\d+$/.test(p); })) {
      throw new ResponseError("Could not read " + quoted(raw) + " as a shape. " + SHAPE_HINT);
    }
    return parts.map(Number);
  }

  function parseChoice(raw, ids) {
    var letter = normalise(raw).replace(/^[(\[]\s*|\s*[)\].]$/g, "").toLowerCase();
    if (ids.indexOf(letter) < 0) {
      throw new ResponseError("Could not read " + quoted(raw) + " as a choice. Pick one of " + ids.join(", ") + ".");
    }
    return letter;
  }

  function parseChoiceSet(raw, ids) {
    var cleaned = normalise(raw).toLowerCase().replace(/[()\[\].]/g, " ");
    var tokens = cleaned.split(/[\s,;&+\/]+|\band\b/).filter(function (t) { return t; });
    if (tokens.length === 1 && tokens[0].length > 1) { tokens = tokens[0].split(""); }
    if (!tokens.length || !tokens.every(function (t) { return ids.indexOf(t) >= 0; })) {
      throw new ResponseError("Could not read " + quoted(raw) + " as choices. Type every letter that applies, like "
        + ids[0] + ", " + ids[ids.length - 1] + " (from " + ids.join(", ") + ").");
    }
    return tokens.filter(function (t, i) { return tokens.indexOf(t) === i; }).sort();
  }

  function parseTrueFalse(raw, choices) {
    var word = normalise(raw).toLowerCase().replace(/[.!]$/, "");
    if (TRUE_WORDS.indexOf(word) >= 0) { return true; }
    if (FALSE_WORDS.indexOf(word) >= 0) { return false; }
    var letter = word.replace(/^[(\[]\s*|\s*[)\]]$/g, "");
    if (choices && Object.prototype.hasOwnProperty.call(choices, letter)) { return choices[letter]; }
    throw new ResponseError("Could not read " + quoted(raw) + " as true or false. " + TRUE_FALSE_HINT);
  }

  function parseArrangement(raw, ids, nSlots, distinct) {
    var cleaned = normalise(raw).toLowerCase().replace(/[()\[\].]/g, " ");
    var tokens = cleaned.split(/[\s,;>\/-]+/).filter(function (t) { return t; });
    if (tokens.length === 1 && tokens[0].length > 1) { tokens = tokens[0].split(""); }
    var example = ids.slice(0, nSlots).join(", ");
    if (tokens.length !== nSlots || !tokens.every(function (t) { return ids.indexOf(t) >= 0; })) {
      throw new ResponseError("Could not read " + quoted(raw) + " as " + nSlots + " letters, one per "
        + (distinct ? "position" : "item") + " in order (like " + example + "), from " + ids.join(", ") + ".");
    }
    if (distinct) {
      var twice = tokens.filter(function (t, i) { return tokens.indexOf(t) !== i; });
      twice = twice.filter(function (t, i) { return twice.indexOf(t) === i; }).sort();
      if (twice.length) {
        throw new ResponseError(twice.join(", ") + " is given twice; each step runs once. Give " + nSlots
          + " different letters in order (like " + example + ").");
      }
    }
    return tokens;
  }

  function parseResponse(text, key) {
    var ids = key.choices.map(function (c) { return c.id; });
    switch (key.kind) {
      case "float": return parseNumber(text, key.unit);
      case "integer": return parseInteger(text, key.unit);
      case "shape": return parseShape(text);
      case "single_choice": return parseChoice(text, ids);
      case "multiple_choice": return parseChoiceSet(text, ids);
      case "true_false":
        var values = {};
        key.choices.forEach(function (c) { values[c.id] = c.value; });
        return parseTrueFalse(text, values);
      case "ordering": return parseArrangement(text, ids, key.slots.length, true);
      case "matching": return parseArrangement(text, ids, key.slots.length, false);
    }
    throw new Error("unknown answer kind " + key.kind);
  }

  // --- judging (mirrors answers.judge) ---------------------------------------
  function isNumber(x) { return typeof x === "number"; }

  function sameList(a, b) {
    return Array.isArray(a) && a.length === b.length && a.every(function (x, i) { return x === b[i]; });
  }

  function matches(kind, reference, response, rtol, atol) {
    if (kind === "float") {
      return isNumber(response) && Math.abs(response - reference) <= atol + rtol * Math.abs(reference);
    }
    if (kind === "integer") { return isNumber(response) && response === reference; }
    if (kind === "shape") { return sameList(response, reference); }
    if (kind === "multiple_choice") {
      return Array.isArray(response) && sameList(response.slice().sort(), reference.slice().sort());
    }
    return response === reference;
  }

  function verdictFor(choice) {
    return {correct: choice.correct, feedback: choice.feedback || (choice.correct ? "Correct." : ""),
            misconception: choice.misconception};
  }

  function unknownMistake(key) {
    if (key.kind === "float") {
      return "That is not the answer (accepted within " + (key.rtol * 100).toFixed(1)
        + "%). Compare your steps with the worked solution.";
    }
    return "That is not the answer. Compare your steps with the worked solution.";
  }

  var MAX_NOTES = 3;

  function stepText(key, id) {
    var text = key.choices.filter(function (c) { return c.id === id; })[0].text;
    return "(" + id + ") " + text;
  }

  function capped(notes) {
    if (notes.length <= MAX_NOTES) { return notes; }
    return notes.slice(0, MAX_NOTES).concat(["(" + (notes.length - MAX_NOTES) + " more like these.)"]);
  }

  function judgeOrdering(key, response) {
    if (sameList(response, key.value)) {
      return {correct: true, feedback: "Correct: every step comes after the steps whose results it reads.",
              misconception: null};
    }
    var notes = [], misconception = null, i, j;
    var byId = {};
    key.choices.forEach(function (c) { byId[c.id] = c; });
    response.forEach(function (id) {
      if (!byId[id].correct) {
        notes.push(stepText(key, id) + " does not belong: " + byId[id].feedback);
        misconception = misconception || byId[id].misconception;
      }
    });
    key.value.forEach(function (id) {
      if (response.indexOf(id) < 0) { notes.push("You left out " + stepText(key, id) + "."); }
    });
    var rules = {};
    key.rules.forEach(function (r) { rules[r.before + " " + r.after] = r.feedback; });
    var pairs = [];
    for (i = 0; i < response.length; i++) {
      for (j = i + 1; j < response.length; j++) {
        if (Object.prototype.hasOwnProperty.call(rules, response[j] + " " + response[i])) {
          pairs.push([response[j], response[i]]);
        }
      }
    }
    // nearest first, as answers.py does (a stable sort by the distance in the key)
    pairs.sort(function (a, b) {
      return (key.value.indexOf(a[1]) - key.value.indexOf(a[0])) - (key.value.indexOf(b[1]) - key.value.indexOf(b[0]));
    });
    var broken = pairs.map(function (p) {
      return stepText(key, p[1]) + " is placed before " + stepText(key, p[0]) + ", but it must come after it: "
        + rules[p[0] + " " + p[1]];
    });
    if (broken.length) { misconception = misconception || "A step placed before the step it uses"; }
    return {correct: false, feedback: capped(notes.concat(broken)).join(" "), misconception: misconception};
  }

  function judgeMatching(key, response) {
    if (sameList(response, key.value)) {
      return {correct: true, feedback: "Correct: every item has its own option.", misconception: null};
    }
    var notes = [], misconception = null;
    key.slots.forEach(function (slot, k) {
      var picked = response[k];
      if (picked !== key.value[k]) {
        var note = Object.prototype.hasOwnProperty.call(slot.wrong, picked) ? slot.wrong[picked]
          : {misconception: null, feedback: "not this one."};
        notes.push(slot.text + " is not " + stepText(key, picked) + ": " + note.feedback);
        misconception = misconception || note.misconception;
      }
    });
    return {correct: false, feedback: capped(notes).join(" "), misconception: misconception};
  }

  function judge(key, response) {
    var i, choice;
    if (key.kind === "ordering") { return judgeOrdering(key, response); }
    if (key.kind === "matching") { return judgeMatching(key, response); }
    if (key.kind === "multiple_choice") {
      var picked = response.slice().sort();
      var correct = key.choices.filter(function (c) { return c.correct; }).map(function (c) { return c.id; });
      if (sameList(picked, correct.slice().sort())) {
        return {correct: true, feedback: "Correct: you picked exactly the right choices.", misconception: null};
      }
      var wrong = key.choices.filter(function (c) { return picked.indexOf(c.id) >= 0 && !c.correct; });
      var notes = wrong.map(function (c) { return "(" + c.id + ") " + c.feedback; });
      var missed = correct.filter(function (id) { return picked.indexOf(id) < 0; }).length;
      if (missed) { notes.push("You left out " + missed + " correct choice" + (missed > 1 ? "s" : "") + "."); }
      return {correct: false, feedback: notes.join(" "), misconception: wrong.length ? wrong[0].misconception : null};
    }
    if (key.kind === "float" || key.kind === "integer" || key.kind === "shape") {
      for (i = 0; i < key.choices.length; i++) {
        choice = key.choices[i];
        if (matches(key.kind, choice.value, response, key.rtol, key.atol)) { return verdictFor(choice); }
      }
      if (matches(key.kind, key.value, response, key.rtol, key.atol)) {
        return {correct: true, feedback: "Correct.", misconception: null};
      }
      var mistakes = key.mistakes || [];
      for (i = 0; i < mistakes.length; i++) {
        if (matches(key.kind, mistakes[i].value, response, key.rtol, key.atol)) {
          return {correct: false, feedback: mistakes[i].feedback, misconception: mistakes[i].misconception};
        }
      }
      return {correct: false, feedback: unknownMistake(key), misconception: null};
    }
    var field = key.kind === "single_choice" ? "id" : "value";
    for (i = 0; i < key.choices.length; i++) {
      if (key.choices[i][field] === response) { return verdictFor(key.choices[i]); }
    }
    return {correct: false, feedback: unknownMistake(key), misconception: null};
  }

  // --- multi-part items (mirrors answers.carried_value and answers.judge_part) ---
  var CARRIED_ERROR = "Carried error from an earlier part";

  function carriedValue(carry, earlier) {
    if (!isNumber(earlier)) { return null; }
    var value;
    if (carry.op === "softmax_with") {
      var row = carry.row.slice();
      row[carry.index] = earlier;
      var top = Math.max.apply(null, row);
      var sum = row.reduce(function (acc, z) { return acc + Math.exp(z - top); }, 0);
      value = Math.exp(row[carry.index] - top) / sum;
    } else if (carry.op === "affine") {
      value = carry.offset + carry.scale * earlier;
    } else if (carry.op === "affine_log") {
      if (earlier <= 0) { return null; }
      value = carry.offset + carry.scale * Math.log(earlier);
    } else {
      return null;
    }
    return isFinite(value) ? value : null;
  }

  function judgePart(key, response, earlierKey, earlierResponse) {
    var verdict = judge(key, response);
    var carry = key.part ? key.part.carry : null;
    if (verdict.correct || !carry || !earlierKey || earlierResponse === null || earlierResponse === undefined) {
      return verdict;
    }
    if (matches(earlierKey.kind, earlierKey.value, earlierResponse, earlierKey.rtol, earlierKey.atol)) { return verdict; }
    var carried = carriedValue(carry, earlierResponse);
    if (carried === null || matches("float", key.value, carried, key.rtol, key.atol)) { return verdict; }
    if (!matches("float", carried, response, key.rtol || 0, key.atol || 0)) { return verdict; }
    var others = key.choices.map(function (c) { return c.value; })
      .concat((key.mistakes || []).map(function (m) { return m.value; }));
    if (others.some(function (v) { return matches("float", v, response, key.rtol || 0, key.atol || 0); })) {
      return verdict;
    }
    var label = earlierKey.part.label;
    return {correct: false, misconception: CARRIED_ERROR,
            feedback: "Carried error: this is right for your answer to part (" + label + "), which is not right. "
              + "Fix part (" + label + ") first; the method of this part holds."};
  }

  // --- decoding the answer keys (mirrors exporters/_payload.py) --------------
  function fnv1a(text) {
    var bytes = new TextEncoder().encode(text);
    var h = 0x811c9dc5;
    for (var i = 0; i < bytes.length; i++) { h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0; }
    return h || 1;
  }

  function decode(payload, key) {
    var binary = atob(payload);
    var bytes = new Uint8Array(binary.length);
    var state = fnv1a(key);
    for (var i = 0; i < binary.length; i++) {
      state = (state ^ (state << 13)) >>> 0;
      state = (state ^ (state >>> 17)) >>> 0;
      state = (state ^ (state << 5)) >>> 0;
      bytes[i] = binary.charCodeAt(i) ^ (state & 0xff);
    }
    return JSON.parse(new TextDecoder().decode(bytes));
  }

  // --- the page ---------------------------------------------------------------
  var items = Array.prototype.slice.call(document.querySelectorAll("section.item"));
  var results = {};

  function updateScore() {
    var right = Object.keys(results).filter(function (k) { return results[k]; }).length;
    document.getElementById("score").textContent = right + " of " + items.length + " right";
  }

  function show(item, cls, html) {
    var box = item.querySelector(".feedback");
    box.className = "feedback " + cls;
    box.innerHTML = html;
  }

  function escapeText(text) {
    var span = document.createElement("span");
    span.textContent = text;
    return span.innerHTML;
  }

  function responseOf(item, key) {
    var kind = key.kind;
    if (kind === "single_choice" || kind === "true_false") {
      var picked = item.querySelector("input[type=radio]:checked");
      if (!picked) { throw new ResponseError("Pick a choice first."); }
      if (kind === "single_choice") { return picked.value; }
      return key.choices.filter(function (c) { return c.id === picked.value; })[0].value;
    }
    if (kind === "ordering" || kind === "matching") {
      var picks = Array.prototype.map.call(item.querySelectorAll("select.slot"), function (s) { return s.value; });
      if (picks.some(function (p) { return !p; })) {
        throw new ResponseError("Pick a letter for every " + (kind === "ordering" ? "step" : "item") + " first.");
      }
      return parseArrangement(picks.join(" "), key.choices.map(function (c) { return c.id; }), key.slots.length,
                              kind === "ordering");
    }
    if (kind === "multiple_choice") {
      var ticked = item.querySelectorAll("input[type=checkbox]:checked");
      if (!ticked.length) { throw new ResponseError("Tick every choice that applies first."); }
      return Array.prototype.map.call(ticked, function (box) { return box.value; }).sort();
    }
    return parseResponse(item.querySelector("input[type=text]").value, key);
  }

  function check(item) {
    var key = decode(item.getAttribute("data-key"), item.id);
    var response;
    try {
      response = responseOf(item, key);
    } catch (err) {
      if (!(err instanceof ResponseError)) { throw err; }
      show(item, "malformed", "<p>" + escapeText(err.message) + "</p>");
      return;
    }
    var verdict = judgePart(key, response, null, null);
    var from = item.getAttribute("data-carry-from");
    if (from) {
      // the earlier part this one reads: its answer as the student typed it now, if it reads
      var earlierItem = document.getElementById(from);
      var earlierKey = decode(earlierItem.getAttribute("data-key"), earlierItem.id);
      var earlierResponse = null;
      try { earlierResponse = responseOf(earlierItem, earlierKey); } catch (err) {
        if (!(err instanceof ResponseError)) { throw err; }
      }
      verdict = judgePart(key, response, earlierKey, earlierResponse);
    }
    var head = verdict.correct ? "<p><strong>Right.</strong></p>"
      : "<p><strong>Not right" + (verdict.misconception ? ": " + escapeText(verdict.misconception) : "")
        + ".</strong></p>";
    show(item, verdict.correct ? "right" : "wrong", head + "<p>" + verdict.feedback + "</p>");
    var solution = item.querySelector("details.solution");
    solution.querySelector(".solution-body").innerHTML = key.solution;
    solution.hidden = false;
    results[item.id] = verdict.correct;
    updateScore();
  }

  items.forEach(function (item) {
    item.querySelector("form").addEventListener("submit", function (event) {
      event.preventDefault();
      check(item);
    });
  });
  updateScore();

  window.selfcheck = {parseResponse: parseResponse, judge: judge, judgePart: judgePart, carriedValue: carriedValue,
                      decode: decode, fnv1a: fnv1a,
                      ResponseError: ResponseError};
})();
