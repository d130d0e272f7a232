// Package html writes kubectl-ssa's reports as one self-contained HTML
// page (-o html of who-owns, explain-conflict, diff and audit): styles and
// the one small script inline, allowed by their hashes in a
// Content-Security-Policy that allows nothing else, so the page fetches
// nothing. It is readable without the script (sections fold with
// details/summary; the audit's filters only hide what is shown), usable
// with a keyboard and a screen reader, light and dark, and prints.
//
// Pages are html/template's: every string of a report is text, never
// markup. They lay out what package render lays out for the text views
// (BlameLines, DiffHunks, the verdicts and notes) and the reports' data;
// they compute nothing of their own. The same reports give the same
// bytes: times are the reports' (in UTC), never the render's.
package html
