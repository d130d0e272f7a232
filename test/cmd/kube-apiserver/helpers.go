package main

import (
	"encoding/base64"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var metav1GetOptions = metav1.GetOptions{}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
