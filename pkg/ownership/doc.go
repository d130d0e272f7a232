// Package ownership turns an object's metadata.managedFields into an
// ownership model: which manager owns which field, since each manager's last
// write, which fields are shared, and which fields nobody owns.
//
// It is pure: it reads an object and returns data (Report) with stable JSON
// field names; it never talks to a cluster and never renders. Paths in
// reports are values of package pathlang, kubectl-ssa's one path language:
// they marshal to the apiserver's path string, the one it uses in conflict
// errors, so reports from different commands can be joined on it, and they
// print (String) in a form that reads back.
package ownership
