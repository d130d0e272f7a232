// Closed sections print open: the page is read on paper too.
addEventListener("beforeprint",function(){document.querySelectorAll("details:not([open])").forEach(function(d){d.open=true;d.setAttribute("data-printed","")})});
addEventListener("afterprint",function(){document.querySelectorAll("details[data-printed]").forEach(function(d){d.open=false;d.removeAttribute("data-printed")})});
