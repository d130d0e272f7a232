package defaults

import "encoding/base64"

// SecretStringData does what the apiserver does with a Secret's
// stringData: its entries replace those of data, base64-encoded, and
// stringData is not stored.
func SecretStringData(obj map[string]any) {
	sd, ok := obj["stringData"].(map[string]any)
	if !ok {
		delete(obj, "stringData")
		return
	}
	data, _ := obj["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		s, _ := v.(string)
		data[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	obj["data"] = data
	delete(obj, "stringData")
}
