// Closed sections print open: the page is read on paper too.
addEventListener("beforeprint",function(){document.querySelectorAll("details:not([open])").forEach(function(d){d.open=true;d.setAttribute("data-printed","")})});
addEventListener("afterprint",function(){document.querySelectorAll("details[data-printed]").forEach(function(d){d.open=false;d.removeAttribute("data-printed")})});
// The audit's filters: shown only where this script runs (without it,
// every finding shows); they hide the findings of the codes and
// severities unticked, and the objects and groups left empty.
document.querySelectorAll("[data-filters]").forEach(function(list){
var form=document.getElementById(list.getAttribute("data-filters"));if(!form)return;
var rows=list.querySelectorAll("tr.f"),groups=list.querySelectorAll(".obj,details.ns,details.cl"),status=form.querySelector(".shown");
function apply(){var off={};form.querySelectorAll("input").forEach(function(i){if(!i.checked)off[i.name+"\u0000"+i.value]=true});
var n=0;rows.forEach(function(r){var hide=off["code\u0000"+r.getAttribute("data-code")]||off["severity\u0000"+r.getAttribute("data-severity")];r.hidden=!!hide;if(!hide)n++});
groups.forEach(function(g){g.hidden=!g.querySelector("tr.f:not([hidden])")});
status.textContent=n+" of "+rows.length+" findings shown"}
form.hidden=false;form.addEventListener("change",apply);apply()});
