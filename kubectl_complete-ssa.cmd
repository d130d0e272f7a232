@echo off
rem Completion shim for kubectl's plugin completion (kubectl 1.26+) on Windows:
rem kubectl runs kubectl_complete-ssa when you press TAB after "kubectl ssa" and
rem finds this file through PATHEXT. Put it on your PATH; it runs the
rem kubectl-ssa.exe beside it, or else the one on the PATH.
if exist "%~dp0kubectl-ssa.exe" (
  "%~dp0kubectl-ssa.exe" __complete %*
) else (
  kubectl-ssa.exe __complete %*
)
