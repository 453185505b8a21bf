module cybercom-ts/ferretdb-v1-build

go 1.24

require github.com/FerretDB/FerretDB v1.24.2
