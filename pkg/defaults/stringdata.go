package defaults

import "encoding/base64"

// SecretStringData does what the apiserver does with a Secret's
// stringData: its entries replace those of data, base64-encoded, and
// stringData is not stored.
func SecretStringData(obj map[string]interface{}) {
	sd, ok := obj["stringData"].(map[string]interface{})
	if !ok {
		delete(obj, "stringData")
		return
	}
	data, _ := obj["data"].(map[string]interface{})
	if data == nil {
		data = map[string]interface{}{}
	}
	for k, v := range sd {
		s, _ := v.(string)
		data[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	obj["data"] = data
	delete(obj, "stringData")
}
