// A prediction exercise on the trace explorer (templates/exercises/_play.html): the stepper stops at
// each question's step until the student answers it; a next-line question is answered by clicking a
// line of the code (or typing its number), a value question by typing a Python literal. The server
// checks the answer against the real trace (webapp/exercises/views.py, exercise_answer) and says why;
// the step's narration sentence explains it, and the stepper goes on from where the answer shows.
// With the narration hidden, a step's narration shows once the questions up to it are answered.
// Keyboard: the answer box has the focus when a question opens; Enter checks; Continue has the focus
// after. Everything a student or the server wrote is put in the page as text, never as HTML.
(function () {
  "use strict";
  var api = window.ExecSimExplorer;
  var source = document.getElementById("exercise-data");
  var panel = document.getElementById("exercise-panel");
  if (!api || !source || !panel) { return; }
  var data = JSON.parse(source.textContent);
  var answered = data.answered || {};
  var token = data.token || "";
  var questions = (data.questions || []).slice().sort(function (a, b) {
    return a.step - b.step || a.number - b.number;
  });
  var open = null;  // the question shown in the panel
  var justAnswered = null;  // its feedback stays until Continue

  function q(id) { return panel.querySelector('[data-testid="' + id + '"]'); }
  function pending() { return questions.filter(function (x) { return !answered[x.id]; }); }

  // -- the stepper stops at questions ---------------------------------------------------------------

  api.hooks.limit = function (from, to) {
    if (!token) { return from; }  // a name first
    if (to <= from) { return to; }
    var stop = pending().filter(function (x) { return x.step >= from && x.step < to; })[0];
    return stop ? stop.step : to;
  };

  api.hooks.narration = function (step, text) {
    if (!data.hideNarration || !pending().length) { return text; }
    var seen = -1;
    questions.forEach(function (x) {
      if (answered[x.id] && x.kind !== "result") { seen = Math.max(seen, x.reveal); }
    });
    return step <= seen ? text : "(The narration shows once you answer the next question.)";
  };

  api.hooks.rendered = function (step, measuring) {
    if (measuring) { return; }
    if (justAnswered) { return; }
    var here = questions.filter(function (x) { return x.step === step; });
    var waiting = here.filter(function (x) { return !answered[x.id]; })[0];
    show(waiting || here[here.length - 1] || null);
  };

  // -- the panel ------------------------------------------------------------------------------------

  var box = q("exercise-question"), input = q("exercise-answer"), feedback = q("exercise-feedback");
  var code = document.querySelector('[data-testid="ex-code"]');

  function show(question) {
    var changed = open !== question || box.hidden;  // a question opening (again): a fresh box, the focus in it
    open = question;
    box.hidden = !question || !token;
    code.classList.toggle("ex-pick", !!question && !answered[question.id] && question.kind === "next_line");
    if (!question || !token) { return; }
    q("exercise-q-title").textContent = "Question " + question.number + " of " + questions.length;
    q("exercise-prompt").textContent = question.prompt;
    var done = answered[question.id];
    q("exercise-answer-form").hidden = !!done;
    q("exercise-continue").hidden = !done || !justAnswered;
    if (done) {
      tell(done);
    } else if (changed) {
      feedback.textContent = "";
      feedback.className = "exercise-feedback";
      input.value = "";
      input.setAttribute("aria-invalid", "false");
      input.placeholder = question.kind === "next_line" ? "a line number" : "a Python value, e.g. [1, 2]";
      input.focus({ preventScroll: true });
    }
    finished();
  }

  function line(text) { var p = document.createElement("p"); p.textContent = text; return p; }

  function tell(result) {  // what the server said of an answer, as text
    feedback.textContent = "";
    feedback.className = "exercise-feedback " + result.status;
    var mine = open && open.kind === "next_line" ? "line " + result.text : result.text;
    var verdict = line((result.status === "right" ? "\u2714 " : "\u2718 ") + result.message);
    verdict.setAttribute("data-testid", "exercise-verdict");
    feedback.appendChild(verdict);
    feedback.appendChild(line("You answered: " + mine));
    if (result.explanation) {
      var why = line("What happens: " + result.explanation);
      why.setAttribute("data-testid", "exercise-explanation");
      feedback.appendChild(why);
    }
    if (result.model) {
      var m = result.model, said;
      if (m.state === "answered" && m.status === "unreadable") {
        said = "The model gave no usable answer: " + (m.message || "its reply could not be read") + ".";
      } else if (m.state === "answered") {
        var given = m.given ? (open && open.kind === "next_line" ? "line " + m.given : m.given) : "no answer";
        said = "The model answered " + given + (m.status === "right" ? ": right." : ": wrong.");
      } else if (m.state === "asking") {
        said = "The model is still answering; see its answer when you come back.";
      } else {
        said = "The model is not available: " + (m.message || "it did not answer") + ".";
      }
      var model = line(said);
      model.setAttribute("data-testid", "exercise-model");
      feedback.appendChild(model);
    }
  }

  function refuse(message) {
    feedback.textContent = "";
    feedback.className = "exercise-feedback unreadable";
    var p = line(message);
    p.setAttribute("data-testid", "exercise-error");
    feedback.appendChild(p);
    input.setAttribute("aria-invalid", "true");
    input.focus();
  }

  function finished() {
    var note = q("exercise-done");
    if (pending().length || !questions.length) { note.hidden = true; return; }
    var right = questions.filter(function (x) { return answered[x.id] && answered[x.id].status === "right"; });
    note.hidden = false;
    note.textContent = "All " + questions.length + " questions answered: " + right.length + " right.";
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    }).then(function (response) {
      return response.json().catch(function () { return { error: "The server answered " + response.status + "." }; })
        .then(function (json) { json.httpStatus = response.status; return json; });
    }, function () { return { error: "The server cannot be reached: check the connection and try again." }; });
  }

  function submit(text) {
    var question = open;
    if (!question || answered[question.id]) { return; }
    if (!text.trim()) { refuse(question.kind === "next_line" ? "Click a line of the code, or type its number." : "Type your prediction first."); return; }
    q("exercise-submit").disabled = true;
    post(data.answer, { token: token, question: question.id, text: text }).then(function (result) {
      q("exercise-submit").disabled = false;
      if (result.error || result.status === "unreadable") { refuse(result.error || result.message); return; }
      answered[question.id] = result;
      justAnswered = question;
      code.classList.remove("ex-pick");
      q("exercise-answer-form").hidden = true;
      tell(result);
      api.go(api.current(), "replace");  // the narration may show now
      var next = q("exercise-continue");
      next.hidden = false;
      next.focus();
      finished();
    });
  }

  q("exercise-answer-form").addEventListener("submit", function (evt) {
    evt.preventDefault();
    submit(input.value);
  });
  code.addEventListener("click", function (evt) {  // a next-line question: click the line
    if (!open || open.kind !== "next_line" || answered[open.id] || evt.target.closest("button")) { return; }
    var li = evt.target.closest("li[data-line]");
    if (!li) { return; }
    input.value = li.getAttribute("data-line");
    submit(input.value);
  });
  q("exercise-continue").addEventListener("click", function () {
    var question = justAnswered;
    justAnswered = null;
    this.hidden = true;
    // on from where the answer shows (a prediction of the result: one step on, into the program)
    api.go(question && question.kind !== "result" ? question.reveal : api.current() + 1, "push");
    var target = open && !answered[open.id] ? input : document.getElementById("explorer");
    target.focus({ preventScroll: true });
  });

  // -- joining: a display name ----------------------------------------------------------------------

  var join = q("exercise-join");
  function joined(name) {
    join.hidden = true;
    var who = q("exercise-who");
    who.hidden = false;
    who.textContent = "Answering as " + name + ". Step forward with the buttons or the arrow keys.";
    api.go(api.current(), "replace");
    if (!open) { document.getElementById("explorer").focus({ preventScroll: true }); }
  }
  // The token is kept in this browser's storage too: in a frame on another site the browser sends no
  // cookie, and a reload would otherwise make the student a new one.
  var key = "execsim-student:" + data.join;
  function remember(value) {
    try { if (value) { localStorage.setItem(key, value); } else { localStorage.removeItem(key); } } catch (e) { /* storage blocked */ }
  }
  function remembered() {
    try { return localStorage.getItem(key) || ""; } catch (e) { return ""; }
  }
  function start(result) {
    token = result.token;
    answered = result.answered || {};
    remember(token);
    joined(result.name);
  }
  function askName() {
    join.hidden = false;
    q("exercise-name").focus({ preventScroll: true });
    api.go(0, "replace");
  }
  join.addEventListener("submit", function (evt) {
    evt.preventDefault();
    var name = q("exercise-name").value;
    post(data.join, { name: name }).then(function (result) {
      if (result.error) { q("exercise-join-error").textContent = result.error; return; }
      start(result);
    });
  });
  var kept = remembered();
  if (token) { remember(token); joined(data.name); }
  else if (kept) {
    api.go(0, "replace");
    post(data.join, { token: kept }).then(function (result) {
      if (result.error) {  // an unknown token is forgotten; any other trouble is said by the name form
        if (result.httpStatus === 403) { remember(""); } else { q("exercise-join-error").textContent = result.error; }
        askName();
        return;
      }
      start(result);
    });
  } else { askName(); }
})();
